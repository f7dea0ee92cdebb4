/* SPDX-License-Identifier: Apache-2.0
 *
 * The plugin host contract as scenarios (contract.c): what a plugin may
 * rely on from the host, exercised through one plugin ("contract") against
 * any host that a ct_driver can drive. test-contract-fake runs them on the
 * SDK's test kit (libddmon-plugin-test), test-contract-real on the core's
 * registry with real VM sessions over socketpairs; so the kit cannot drift
 * from the core unnoticed: a scenario the kit gets wrong fails there.
 *
 * A driver plays the world around the plugin: it adds VMs and makes them
 * ready or gone, sends DDM events, reads the requests the plugin sent and
 * answers them, lets time pass (timers, request timeouts), runs commands
 * and reads the views back. Calls may complete asynchronously on the real
 * host; scenarios wait with CT_WAIT_FOR, which pumps the driver.
 */
#ifndef DDM_TEST_CONTRACT_H
#define DDM_TEST_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>

typedef struct ct_host ct_host;

typedef struct ct_driver {
    const char *name;
    /** A host with no plugin. */
    ct_host *(*new_host)(void);
    /** VMs go (plugins see GONE), the plugin is unloaded, all freed. */
    void (*free_host)(ct_host *h);
    /** Option "PLUGIN.KEY" = @value, before load. */
    void (*set_option)(ct_host *h, const char *key, const char *value);
    /** Run @desc's init: 0 if the plugin is loaded, non-zero if refused. */
    int (*load)(ct_host *h, const ddm_plugin_desc *desc);
    /** A connected DDM VM that has not answered HELO yet (no event). The
     *  handle stays valid memory until free_host. */
    ddm_vm *(*add_vm)(ct_host *h, const char *key, uint32_t pid, const char *app);
    /** It answers HELO: DDM_VM_READY. */
    void (*vm_ready)(ct_host *h, ddm_vm *vm);
    /** It goes away: DDM_VM_GONE. */
    void (*vm_gone)(ct_host *h, ddm_vm *vm);
    /** The VM sends a DDM event chunk. */
    void (*send_event)(ct_host *h, ddm_vm *vm, uint32_t type, const void *data, size_t len);
    /** The next request the plugin sent to @vm: 1 and its type, id and
     *  payload (at most @cap bytes), or 0 if none came. */
    int (*take_request)(ct_host *h, ddm_vm *vm, uint32_t *type, uint32_t *id, uint8_t *buf,
                        size_t cap, size_t *len);
    /** The VM answers request @id with a chunk. */
    void (*reply_chunk)(ct_host *h, ddm_vm *vm, uint32_t id, uint32_t type, const void *data,
                        size_t len);
    /** Time passes beyond every pending request's timeout. */
    void (*expire_requests)(ct_host *h);
    /** Let a little time pass (timers may fire, I/O happen). 0 when nothing
     *  can change any more by waiting. */
    int (*pump)(ct_host *h);
    /** A client runs a plugin command. */
    void (*run_command)(ct_host *h, int argc, const char *const *argv);
    /** 1 once the last command finished, with its status and message. */
    int (*cmd_done)(ct_host *h, ddm_cmd_status *status, char *message, size_t cap);
    /** Integer field @key of the last command's result record, or -1. */
    int64_t (*cmd_result_int)(ct_host *h, const char *key);
    /** Rows of view @name of @vm (NULL: global) as published, or -1 if none. */
    int (*view_rows)(ct_host *h, ddm_vm *vm, const char *name);
    /** Integer field @key of record view @name: 0 and *@out, or -1. */
    int (*view_field_int)(ct_host *h, ddm_vm *vm, const char *name, const char *key,
                          int64_t *out);
    /** Length of string field @key of record view @name, or -1. */
    long (*view_field_len)(ct_host *h, ddm_vm *vm, const char *name, const char *key);
    /** (ABI 1.2) The VM sends a DDM event of @len bytes too large to arrive
     *  whole, which the host streams. @end_status 0: every byte arrives;
     *  -EPROTO: the packet carries only the first @len / 2 (its chunk
     *  declares @len); -EPIPE: the first @len / 2 arrive, then the VM goes
     *  away (DDM_VM_GONE); -EFBIG: @len is past the user's --max-stream. */
    void (*send_stream)(ct_host *h, ddm_vm *vm, uint32_t type, const void *data, size_t len,
                        int end_status);
    /** (ABI 1.2) How many progress reports of the last command reached the
     *  client, and the last figures (unit: "B" or ""). */
    int (*cmd_progress)(ct_host *h, uint64_t *done, uint64_t *total, char *unit, size_t cap);
    /** (ABI 1.2) A plain JVM (no DDM: it answers HELO with a JDWP error)
     *  connects and is known: plain listeners hear DDM_VM_READY. */
    ddm_vm *(*add_plain_vm)(ct_host *h, const char *key, uint32_t pid, const char *app);
    /** (ABI 1.2) The next JDWP command the plugin sent to plain JVM @vm: 1
     *  and its command set, command, id and data (at most @cap bytes), or 0. */
    int (*take_jdwp)(ct_host *h, ddm_vm *vm, uint8_t *cmdset, uint8_t *cmd, uint32_t *id,
                     uint8_t *buf, size_t cap, size_t *len);
    /** (ABI 1.2) The JVM answers JDWP command @id: @error 0 with @data/@len,
     *  else that JDWP error. */
    void (*reply_jdwp)(ct_host *h, ddm_vm *vm, uint32_t id, uint16_t error, const void *data,
                       size_t len);
    /** (ABI 1.2) A debugger attaches to @vm through ddmon (1) or leaves (0). */
    void (*set_debugger)(ct_host *h, ddm_vm *vm, int attached);
    /** (ABI 1.5) A frontend begins to watch views nobody watched (as a
     *  snapshot's watch does): how many timers were woken (the kit runs
     *  them at once, the core at the next loop iteration). */
    int (*watch_begins)(ct_host *h);
    /** (ABI 1.6) A frontend begins (@on 1) or stops (0) watching the VM
     *  list (the core's global "vms" view). */
    void (*watch_vm_list)(ct_host *h, int on);
    /** (ABI 1.6) A frontend watches view @name of the VM keyed @vm_key, made
     *  or not, the VM ready or not (the kit: default watchers on every view). */
    void (*watch_declared)(ct_host *h, const char *name, const char *vm_key);
    /** (ABI 1.6) The linger of the unwatched declared views made on demand
     *  ends: their unmakes run (the core: its timer, the kit: at once). */
    void (*linger_passes)(ct_host *h);
    /** (ABI 1.8) The server stops: the stopping hooks run, then every VM
     *  closes (the core: the daemon's order, its bounded flush and gentle
     *  closes; the kit: fake_host_stopping, then GONE for each VM). */
    void (*server_stops)(ct_host *h);
} ct_driver;

struct CMUnitTest;
/** Run every scenario on @drv, then the @n_extra tests of this host only, as
 *  one cmocka group; the cmocka exit status. */
int contract_run(const ct_driver *drv, const struct CMUnitTest *extra, size_t n_extra);

#endif /* DDM_TEST_CONTRACT_H */
