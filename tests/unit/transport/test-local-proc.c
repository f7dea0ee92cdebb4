/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for core/transport/local_proc.c: /proc/net/tcp{,6} lines (the
 * fixtures in tests/fixtures/proc are real kernel output, little-endian),
 * java command lines as jps shows them, socket links, and the walk over a
 * fake /proc tree: a local JVM is found with its pid and main class,
 * another user's socket says so, a peer that is not here says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "core/transport/local_proc.h"
#include "tests/harness/rm-tree.h"

#define FIXTURES DDM_TEST_SRCDIR "/tests/fixtures/proc"

static void v4(uint8_t a[16], uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
    memset(a, 0, 16);
    a[10] = a[11] = 0xff;
    a[12] = b0;
    a[13] = b1;
    a[14] = b2;
    a[15] = b3;
}

static void test_parse_lines(void **state)
{
    DdmProcNetEntry e;
    uint8_t lo[16];
    (void)state;
    v4(lo, 127, 0, 0, 1);
    assert_false(ddm_procnet_parse_line(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
        FALSE, &e));
    assert_false(ddm_procnet_parse_line("   3: garbage line", FALSE, &e));
    assert_false(ddm_procnet_parse_line("", FALSE, &e));
    assert_false(ddm_procnet_parse_line("   0: 0100007F:1F52", FALSE, &e)); /* cut short */
    assert_true(ddm_procnet_parse_line(
        "   1: 0100007F:1F52 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000  1000        0 "
        "777001 1 0000000000000000 20 4 30 10 -1",
        FALSE, &e));
    assert_int_equal(e.local_port, 0x1F52);
    assert_int_equal(e.remote_port, 0xA1B2);
    assert_int_equal(e.state, DDM_TCP_ESTABLISHED);
    assert_int_equal(e.uid, 1000);
    assert_int_equal(e.inode, 777001);
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
    assert_memory_equal(e.local_addr, lo, 16);
    assert_memory_equal(e.remote_addr, lo, 16);
    /* ::1 in tcp6 */
    assert_true(ddm_procnet_parse_line(
        "   0: 00000000000000000000000001000000:1F54 00000000000000000000000001000000:B000 01 "
        "00000000:00000000 00:00000000 00000000  1000        0 777003 1 0000000000000000 20 4 0 10 -1",
        TRUE, &e));
    static const uint8_t one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    assert_memory_equal(e.local_addr, one, 16);
    assert_int_equal(e.inode, 777003);
    /* an IPv4-mapped address in tcp6 compares equal to the same address in tcp */
    assert_true(ddm_procnet_parse_line(
        "   1: 0000000000000000FFFF00000100007F:1F55 0000000000000000FFFF00000100007F:B001 01 "
        "00000000:00000000 00:00000000 00000000  1000        0 777004 1 0000000000000000 20 4 0 10 -1",
        TRUE, &e));
    assert_memory_equal(e.local_addr, lo, 16);
#endif
    /* a listening socket */
    assert_true(ddm_procnet_parse_line(
        "   0: 0100007F:1F52 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 "
        "0000000000000000 100 0 0 10 0",
        FALSE, &e));
    assert_int_equal(e.state, DDM_TCP_LISTEN);
}

static char *main_of(const char *const *argv)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; argv[i]; i++)
        g_string_append_len(s, argv[i], (gssize)strlen(argv[i]) + 1);
    char *r = ddm_proc_cmdline_main(s->str, s->len);
    g_string_free(s, TRUE);
    return r;
}

static void expect_main(const char *const *argv, const char *want)
{
    char *got = main_of(argv);
    if (want)
        assert_string_equal(got, want);
    else
        assert_null(got);
    g_free(got);
}

static void test_cmdline_main(void **state)
{
    (void)state;
    expect_main((const char *const[]){"/usr/bin/java",
                                      "-agentlib:jdwp=transport=dt_socket,server=y,address=8000",
                                      "-cp", "/tmp/java", "Sleeper", "5", NULL},
                "Sleeper");
    expect_main((const char *const[]){"java", "-Xmx1g", "-Dfoo=bar", "-jar", "/opt/app/app.jar",
                                      "--port", "1", NULL},
                "/opt/app/app.jar");
    expect_main((const char *const[]){"java", "--module-path", "mods", "-m", "com.x/com.x.Main", NULL},
                "com.x/com.x.Main");
    expect_main((const char *const[]){"java", "--module=com.y/com.y.Main", NULL}, "com.y/com.y.Main");
    expect_main((const char *const[]){"java", "-classpath", "a:b", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                                      "@args.txt", "org.example.Server", NULL},
                "org.example.Server");
    expect_main((const char *const[]){"java", "-cp", NULL}, NULL); /* cut short */
    expect_main((const char *const[]){"java", "-version", NULL}, NULL);
    expect_main((const char *const[]){"java", "-jar", NULL}, NULL);
    /* not the java launcher: its own name */
    expect_main((const char *const[]){"/opt/idea/bin/idea", "-Xmx2g", "x", NULL}, "idea");
    assert_null(ddm_proc_cmdline_main(NULL, 0));
    assert_null(ddm_proc_cmdline_main("", 0));
    /* no terminating NUL (a truncated read) */
    char *r = ddm_proc_cmdline_main("java\0Main", 9);
    assert_string_equal(r, "Main");
    g_free(r);
}

static void test_socket_inode(void **state)
{
    (void)state;
    assert_int_equal(ddm_proc_socket_inode("socket:[777001]"), 777001);
    assert_int_equal(ddm_proc_socket_inode("socket:[]"), 0);
    assert_int_equal(ddm_proc_socket_inode("socket:[12"), 0);
    assert_int_equal(ddm_proc_socket_inode("socket:[12]x"), 0);
    assert_int_equal(ddm_proc_socket_inode("pipe:[12]"), 0);
    assert_int_equal(ddm_proc_socket_inode("/dev/null"), 0);
    assert_int_equal(ddm_proc_socket_inode(NULL), 0);
}

/* A fake /proc: net/tcp{,6} from the fixtures, pid 4242 holding socket 777001
 * and running "java ... Sleeper"; pid 4343 without an fd we know. */
static char *make_proc(void)
{
    char *root = g_dir_make_tmp("ddm-proc-XXXXXX", NULL);
    char *p, *text;
    gsize n;
    assert_non_null(root);
    p = g_build_filename(root, "net", NULL);
    g_mkdir(p, 0700);
    g_free(p);
    assert_true(g_file_get_contents(FIXTURES "/net-tcp.txt", &text, &n, NULL));
    p = g_build_filename(root, "net", "tcp", NULL);
    assert_true(g_file_set_contents(p, text, (gssize)n, NULL));
    g_free(p);
    g_free(text);
    assert_true(g_file_get_contents(FIXTURES "/net-tcp6.txt", &text, &n, NULL));
    p = g_build_filename(root, "net", "tcp6", NULL);
    assert_true(g_file_set_contents(p, text, (gssize)n, NULL));
    g_free(p);
    g_free(text);
    p = g_build_filename(root, "4242", "fd", NULL);
    g_mkdir_with_parents(p, 0700);
    g_free(p);
    p = g_build_filename(root, "4242", "fd", "0", NULL);
    assert_int_equal(symlink("/dev/null", p), 0);
    g_free(p);
    p = g_build_filename(root, "4242", "fd", "5", NULL);
    assert_int_equal(symlink("socket:[777001]", p), 0);
    g_free(p);
    static const char cmd[] = "java\0-agentlib:jdwp=transport=dt_socket\0-cp\0/t\0Sleeper\0";
    p = g_build_filename(root, "4242", "cmdline", NULL);
    assert_true(g_file_set_contents(p, cmd, sizeof cmd - 1, NULL));
    g_free(p);
    p = g_build_filename(root, "4343", "fd", NULL);
    g_mkdir_with_parents(p, 0700);
    g_free(p);
    p = g_build_filename(root, "self", NULL); /* not a pid: skipped */
    g_mkdir(p, 0700);
    g_free(p);
    return root;
}

static void rm_rf(const char *root)
{
    assert_int_equal(test_rm_tree(root), 0);
}

static void test_walk(void **state)
{
    DdmLocalPeer p;
    uint8_t lo[16];
    char *note;
    char *root = make_proc();
    (void)state;
    v4(lo, 127, 0, 0, 1);

#if G_BYTE_ORDER == G_LITTLE_ENDIAN
    /* the JVM: its socket 127.0.0.1:8018 <-> our 127.0.0.1:41394 */
    ddm_local_peer_find_addr(lo, 0x1F52, lo, 0xA1B2, root, &p);
    assert_int_equal(p.who, DDM_PEER_FOUND);
    assert_int_equal(p.pid, 4242);
    assert_int_equal(p.uid, 1000);
    assert_string_equal(p.main_class, "Sleeper");
    assert_null(ddm_local_peer_note(&p));
    ddm_local_peer_clear(&p);

    /* a socket no readable process holds: another user's */
    ddm_local_peer_find_addr(lo, 0x1F53, lo, 0xA1B3, root, &p);
    assert_int_equal(p.who, DDM_PEER_OTHER_USER);
    assert_int_equal(p.pid, 0);
    assert_int_equal(p.uid, 1001);
    note = ddm_local_peer_note(&p);
    assert_string_equal(note, "pid unknown: another user's process (uid 1001)");
    g_free(note);
    ddm_local_peer_clear(&p);
#endif

    /* no such socket here: a remote VM */
    uint8_t remote[16];
    v4(remote, 10, 1, 2, 3);
    ddm_local_peer_find_addr(remote, 8000, lo, 0xA1B2, root, &p);
    assert_int_equal(p.who, DDM_PEER_NOT_LOCAL);
    note = ddm_local_peer_note(&p);
    assert_string_equal(note, "pid unknown: not a process on this host");
    g_free(note);
    ddm_local_peer_clear(&p);

    /* no /proc at all */
    ddm_local_peer_find_addr(lo, 0x1F52, lo, 0xA1B2, "/nonexistent-ddm-proc", &p);
    assert_int_equal(p.who, DDM_PEER_UNKNOWN);
    /* not a socket */
    ddm_local_peer_find(-1, root, &p);
    assert_int_equal(p.who, DDM_PEER_UNKNOWN);
    rm_rf(root);
    g_free(root);
}

/* Somebody is connected to a local port: an established socket with that
 * local end (the fixtures: 127.0.0.1:8018 and :8019 established, 8018 also
 * listening; ::1:8020 and ::ffff:127.0.0.1:8021 in tcp6); loopback
 * addresses match each other; another port or host does not. */
static void test_port_connected(void **state)
{
    uint8_t lo[16], remote[16];
    char *root = make_proc();
    (void)state;
    v4(lo, 127, 0, 0, 1);
    v4(remote, 10, 1, 2, 3);
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
    assert_true(ddm_local_port_connected(lo, 0x1F52, root));
    assert_true(ddm_local_host_port_connected("127.0.0.1", 0x1F53, root));
    assert_true(ddm_local_host_port_connected("localhost", 0x1F52, root));
    assert_true(ddm_local_host_port_connected("127.0.0.2", 0x1F52, root)); /* loopback: any */
    assert_true(ddm_local_host_port_connected("0.0.0.0", 0x1F52, root));
    assert_true(ddm_local_host_port_connected("::1", 0x1F54, root));
    assert_true(ddm_local_host_port_connected("127.0.0.1", 0x1F54, root)); /* ::1 is loopback */
    assert_true(ddm_local_host_port_connected("127.0.0.1", 0x1F55, root)); /* v4-mapped */
#endif
    assert_false(ddm_local_port_connected(remote, 0x1F52, root));
    assert_false(ddm_local_host_port_connected("127.0.0.1", 0x1F56, root));
    assert_false(ddm_local_host_port_connected("vm.example", 0x1F52, root)); /* not resolved */
    assert_false(ddm_local_host_port_connected(NULL, 0x1F52, root));
    assert_false(ddm_local_host_port_connected("127.0.0.1", 0x1F52, "/nonexistent-ddm-proc"));
    rm_rf(root);
    g_free(root);
}

/* The real /proc: a socket pair of our own is found as our own pid. */
static void test_walk_real_proc(void **state)
{
    (void)state;
    GSocket *listener = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
    if (!listener || !g_file_test("/proc/net/tcp", G_FILE_TEST_EXISTS)) {
        if (listener)
            g_object_unref(listener);
        skip();
    }
    GInetAddress *lo = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
    GSocketAddress *sa = g_inet_socket_address_new(lo, 0);
    assert_true(g_socket_bind(listener, sa, TRUE, NULL));
    assert_true(g_socket_listen(listener, NULL));
    GSocketAddress *bound = g_socket_get_local_address(listener, NULL);
    GSocket *client = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
    assert_true(g_socket_connect(client, bound, NULL, NULL));
    GSocket *server = g_socket_accept(listener, NULL, NULL);
    assert_non_null(server);
    DdmLocalPeer p;
    ddm_local_peer_find(g_socket_get_fd(client), "/proc", &p);
    assert_int_equal(p.who, DDM_PEER_FOUND);
    assert_int_equal(p.pid, (uint32_t)getpid());
    assert_int_equal(p.uid, (uint32_t)getuid());
    ddm_local_peer_clear(&p);
    g_object_unref(server);
    g_object_unref(client);
    g_object_unref(bound);
    g_object_unref(sa);
    g_object_unref(lo);
    g_object_unref(listener);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_lines),
        cmocka_unit_test(test_cmdline_main),
        cmocka_unit_test(test_socket_inode),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_walk_real_proc),
        cmocka_unit_test(test_port_connected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
