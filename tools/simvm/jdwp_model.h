/* SPDX-License-Identifier: Apache-2.0
 *
 * A small, consistent JDWP object model for one debugger connection of a
 * simulated VM, enough for jdb and simple JDI programs to attach, list
 * threads and thread groups, print stacks of suspended threads, list
 * classes and quit, exactly as on a real VM.
 *
 * What it models (all IDs are 8 bytes, as VirtualMachine.IDSizes says):
 *  - threads: the VM's SimThreads, ObjectID = SIM_JDWP_THREAD_BASE + thread id;
 *    core daemon threads are in group "system", the others in "main"
 *    (a child of "system");
 *  - classes: java.lang.Object, String, Class, Thread, ThreadGroup, Throwable, the
 *    app's <package>.MainActivity and every class of the stack templates
 *    STKL uses; methods are those the stacks show (native ones, line -2,
 *    are separate methods with the native modifier); line tables map code
 *    index = line number;
 *  - suspension: VirtualMachine.Suspend/Resume and ThreadReference
 *    Suspend/Resume keep per-thread suspend counts; Frames and FrameCount
 *    need a suspended thread, as JDWP says;
 *  - event requests are accepted with fresh ids and never fire; Clear and
 *    ClearAllBreakpoints are accepted.
 * Invariants: the class and method tables never change for the life of a
 * model, so every ID a debugger holds stays valid; a thread that died after
 * the model saw it stays a terminated thread (Name, status ZOMBIE, no
 * group; Suspend, Frames... give INVALID_THREAD), as on a real VM.
 * Non-goals: values, fields, locals, stepping, events, invoking methods
 * (the caller answers NOT_IMPLEMENTED for everything the model leaves).
 */
#ifndef SIMVM_JDWP_MODEL_H
#define SIMVM_JDWP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/bytes.h>

#include "threads.h"

#define SIM_JDWP_THREAD_BASE 0x10000u

/* JDWP error codes the model returns */
#define SIM_JDWP_OK 0
#define SIM_JDWP_INVALID_THREAD 10
#define SIM_JDWP_INVALID_THREAD_GROUP 11
#define SIM_JDWP_THREAD_NOT_SUSPENDED 13
#define SIM_JDWP_INVALID_OBJECT 20
#define SIM_JDWP_INVALID_CLASS 21
#define SIM_JDWP_INVALID_METHODID 23
#define SIM_JDWP_NOT_IMPLEMENTED 99
#define SIM_JDWP_ABSENT_INFORMATION 101
#define SIM_JDWP_INVALID_EVENT_TYPE 102
#define SIM_JDWP_ILLEGAL_ARGUMENT 103
#define SIM_JDWP_INTERNAL 113
#define SIM_JDWP_INVALID_INDEX 503
#define SIM_JDWP_INVALID_LENGTH 504
#define SIM_JDWP_NATIVE_METHOD 511

/** Returned by sim_jdwp_model_answer() for commands the model leaves to its caller. */
#define SIM_JDWP_UNHANDLED (-1)

typedef struct SimJdwpModel SimJdwpModel;

/** A model for an app whose package is @package_name (may be NULL). (transfer full) */
SimJdwpModel *sim_jdwp_model_new(const char *package_name);
void sim_jdwp_model_free(SimJdwpModel *m);
/** Forget suspensions and event requests (VirtualMachine.Dispose). */
void sim_jdwp_model_reset(SimJdwpModel *m);

/**
 * Answer command @cmdset/@cmd with payload @data (@len bytes, borrowed)
 * against the live threads @ts. Returns SIM_JDWP_UNHANDLED (nothing
 * written) for commands the model does not answer, else a JDWP error code;
 * on SIM_JDWP_OK the reply data is in @w (a fresh writer; on an error @w
 * holds nothing useful and the reply carries no data).
 */
int sim_jdwp_model_answer(SimJdwpModel *m, const SimThreads *ts, uint8_t cmdset, uint8_t cmd,
                          const uint8_t *data, size_t len, ddm_writer *w);

/* The hook handlers.c calls for every plain JDWP command (jdwp_model.c). */
struct SimConn;
struct DdmJdwpPacket;
/**
 * Answer @pkt from the connection's model (created on first use, freed by
 * sim_conn_free()). Returns 0 when the caller must answer it itself
 * (Version, IDSizes, Dispose, Exit, and NOT_IMPLEMENTED for the rest);
 * on Dispose the model is reset first.
 */
int sim_jdwp_handle(struct SimConn *c, const struct DdmJdwpPacket *pkt);

#endif /* SIMVM_JDWP_MODEL_H */
