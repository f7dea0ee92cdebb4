/* SPDX-License-Identifier: Apache-2.0
 *
 * A transport for tests: a DdmTarget whose connect hands the session one end
 * of a socketpair (from an idle, never inside the call, as the contract of
 * DdmTargetOps.connect asks), or reports a refused connect. The test keeps
 * the other end and plays the VM. Header-only: the session tests link the
 * session sources directly and the pluginhost tests the core library.
 */
#ifndef DDM_TEST_PAIR_TARGET_H
#define DDM_TEST_PAIR_TARGET_H

#include <fcntl.h>
#include <unistd.h>

#include "core/transport/target.h"

typedef struct TestPairTarget {
    int ddmon_end;  /* handed to the session on connect; owned until then */
    gboolean fail;  /* report a connect error instead */
} TestPairTarget;

typedef struct TestPairConnect {
    DdmTarget *t;
    DdmTargetConnectedFn done;
    gpointer ud;
} TestPairConnect;

static gboolean test_pair_connect_idle(gpointer p)
{
    TestPairConnect *pc = p;
    TestPairTarget *pt = pc->t->priv;

    if (pt->fail) {
        GError *e = g_error_new(G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED, "connect: refused");
        pc->done(pc->t, -1, e, pc->ud);
        g_error_free(e);
    } else {
        int fd = pt->ddmon_end;
        pt->ddmon_end = -1;
        /* non-blocking, as a target hands it over (target.h) */
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        pc->done(pc->t, fd, NULL, pc->ud);
    }
    ddm_target_unref(pc->t);
    g_free(pc);
    return G_SOURCE_REMOVE;
}

static void test_pair_connect(DdmTarget *t, unsigned timeout_ms, DdmConnectCancel *cancel,
                              DdmTargetConnectedFn done, gpointer ud)
{
    TestPairConnect *pc = g_new0(TestPairConnect, 1);
    (void)timeout_ms;
    (void)cancel;
    pc->t = ddm_target_ref(t);
    pc->done = done;
    pc->ud = ud;
    g_idle_add(test_pair_connect_idle, pc);
}

static void test_pair_destroy(DdmTarget *t)
{
    TestPairTarget *pt = t->priv;
    if (pt->ddmon_end >= 0)
        close(pt->ddmon_end);
    g_free(pt);
}

static const DdmTargetOps test_pair_ops = {
    .transport = "pair",
    .connect = test_pair_connect,
    .destroy = test_pair_destroy,
};

/* The same for a target that may be any JVM, as TCP targets are (the
 * session probes it with VirtualMachine.Version before any DDM). */
static const DdmTargetOps test_pair_jvm_ops = {
    .transport = "pair",
    .caps = DDM_TARGET_CAP_ANY_JVM,
    .connect = test_pair_connect,
    .destroy = test_pair_destroy,
};

/* A target @key whose connect hands over @ddmon_end (taken: closed with the
 * target if never handed over), or fails when @fail. (transfer full) */
static inline DdmTarget *test_pair_target_new(const char *key, int ddmon_end, gboolean fail)
{
    TestPairTarget *pt = g_new0(TestPairTarget, 1);
    DdmTarget *t = g_new0(DdmTarget, 1);
    pt->ddmon_end = ddmon_end;
    pt->fail = fail;
    t->ops = &test_pair_ops;
    t->ref_count = 1;
    t->key = g_strdup(key);
    t->origin = g_strdup("test");
    t->priv = pt;
    return t;
}

/* test_pair_target_new for a target that may be any JVM. (transfer full) */
static inline DdmTarget *test_pair_jvm_target_new(const char *key, int ddmon_end)
{
    DdmTarget *t = test_pair_target_new(key, ddmon_end, FALSE);
    t->ops = &test_pair_jvm_ops;
    return t;
}

#endif /* DDM_TEST_PAIR_TARGET_H */
