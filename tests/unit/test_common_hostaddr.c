// LINK: tools/common/hostaddr.c
/* tests/unit/test_common_hostaddr.c: HOST[:PORT] as every host tool reads it
 * (tools/common/hostaddr.c): dotted addresses of any network, names through
 * getaddrinfo, ports checked, and errors that say what was wrong. */
#include "test.h"
#include <arpa/inet.h>
#include "tools/common/hostaddr.h"

static const char *addr_of(const struct sockaddr_in *a)
{
    static char buf[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
}

TEST(hostaddr_dotted_any_network_default_port)
{
    struct sockaddr_in a;
    char err[HOSTADDR_ERR_MAX];
    CHECK_EQ(hostaddr_parse("192.168.7.20", 9000, &a, err, sizeof err), 0);
    CHECK_STR(addr_of(&a), "192.168.7.20");
    CHECK_EQ(ntohs(a.sin_port), 9000);
    CHECK_EQ(a.sin_family, AF_INET);
    CHECK_EQ(hostaddr_parse("10.0.0.1", 1, &a, err, sizeof err), 0);
    CHECK_STR(addr_of(&a), "10.0.0.1");
}

TEST(hostaddr_host_colon_port)
{
    struct sockaddr_in a;
    char err[HOSTADDR_ERR_MAX];
    CHECK_EQ(hostaddr_parse("127.0.0.1:9123", 9000, &a, err, sizeof err), 0);
    CHECK_STR(addr_of(&a), "127.0.0.1");
    CHECK_EQ(ntohs(a.sin_port), 9123);
    CHECK_EQ(hostaddr_parse("172.16.0.9:65535", 9000, &a, err, sizeof err), 0);
    CHECK_EQ(ntohs(a.sin_port), 65535);
}

TEST(hostaddr_names_resolve_to_ipv4)
{
    struct sockaddr_in a;
    char err[HOSTADDR_ERR_MAX];
    /* localhost is in every /etc/hosts: a name, resolved without DNS. */
    CHECK_EQ(hostaddr_parse("localhost:9001", 9000, &a, err, sizeof err), 0);
    CHECK_EQ(ntohl(a.sin_addr.s_addr) >> 24, 127);
    CHECK_EQ(ntohs(a.sin_port), 9001);
}

TEST(hostaddr_bad_ports)
{
    static const char *bad[] = { "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:",
                                 "127.0.0.1:90x", "127.0.0.1:+90", "127.0.0.1:-1",
                                 "127.0.0.1:99999999999999999999" };
    for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct sockaddr_in a;
        char err[HOSTADDR_ERR_MAX] = "";
        CHECK_EQ(hostaddr_parse(bad[i], 9000, &a, err, sizeof err), -1);
        CHECK(strstr(err, "out of range (1-65535)") != NULL);
        CHECK(strstr(err, bad[i]) != NULL);
    }
    CHECK_EQ(hostaddr_port("1"), 1);
    CHECK_EQ(hostaddr_port("65535"), 65535);
    CHECK_EQ(hostaddr_port(" 5"), -1);
}

TEST(hostaddr_unresolvable_and_empty)
{
    struct sockaddr_in a;
    char err[HOSTADDR_ERR_MAX] = "";
    /* An empty label: the resolver refuses the name before any query
     * leaves the machine (a well-formed unknown name would ask the DNS
     * server, and the tests keep their traffic on 127.0.0.1). */
    CHECK_EQ(hostaddr_parse("no..such.host", 9000, &a, err, sizeof err), -1);
    CHECK(strstr(err, "cannot resolve 'no..such.host' to an IPv4 address") != NULL);
    CHECK_EQ(hostaddr_parse(":9000", 9000, &a, err, sizeof err), -1);
    CHECK(strstr(err, "no host") != NULL);
    CHECK_EQ(hostaddr_parse("", 9000, &a, err, sizeof err), -1);
    CHECK_EQ(hostaddr_parse("999.1.1.1", 9000, &a, err, sizeof err), -1);
    CHECK(strstr(err, "cannot resolve '999.1.1.1'") != NULL);
}

TEST(hostaddr_name_for_messages)
{
    char n[HOSTADDR_NAME_MAX];
    hostaddr_name("127.0.0.1", 9000, n, sizeof n);
    CHECK_STR(n, "127.0.0.1:9000");
    hostaddr_name("box:9100", 9000, n, sizeof n);
    CHECK_STR(n, "box:9100");
}
