/* SPDX-License-Identifier: Apache-2.0
 *
 * One GSource over an epoll set, so thousands of simulated VMs (listeners
 * and connections) cost one entry in glib's poll array instead of one
 * each. Callbacks run from the glib main loop, never concurrently.
 *
 * Invariant: a handle removed during a dispatch batch is only marked dead
 * and freed after the batch, so pending events for it are skipped safely.
 * Non-goals: edge-triggered mode, portability beyond Linux (epoll).
 */
#ifndef SIMVM_REACTOR_H
#define SIMVM_REACTOR_H

#include <glib.h>
#include <stdint.h>

#define SIM_IO_IN 0x1u
#define SIM_IO_OUT 0x2u
#define SIM_IO_ERR 0x4u /* error or hang-up */

typedef struct SimReactor SimReactor;
typedef struct SimIoHandle SimIoHandle;
typedef void (*SimIoFn)(void *ud, unsigned events);

/** Attach to @ctx (NULL = default). (transfer full) NULL if epoll fails. */
SimReactor *sim_reactor_new(GMainContext *ctx);
void sim_reactor_free(SimReactor *r);
/** Watch @fd (not owned) for @events. NULL on failure (errno set). */
SimIoHandle *sim_reactor_add(SimReactor *r, int fd, unsigned events, SimIoFn fn, void *ud);
void sim_reactor_modify(SimReactor *r, SimIoHandle *h, unsigned events);
/** Stop watching; the handle is freed later (safe from inside its callback). */
void sim_reactor_remove(SimReactor *r, SimIoHandle *h);

#endif /* SIMVM_REACTOR_H */
