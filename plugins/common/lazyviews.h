/* SPDX-License-Identifier: Apache-2.0
 *
 * lazyviews: the shape the plugins whose per-VM views are made on demand
 * share (plugin ABI 1.6, vm_view_declare and vm_view_unmake): declare a
 * list of view names with one make and one unmake, find which of a VM's
 * view pointers a name is, and free a view the core takes back. SDK
 * headers only. The names and the slots (the addresses of a VM state's
 * ddm_view pointers) are given in the same order.
 */
#ifndef DDM_PLUGINS_COMMON_LAZYVIEWS_H
#define DDM_PLUGINS_COMMON_LAZYVIEWS_H

#include <stddef.h>

#include <ddmon/plugin.h>

/** Declare the @n views @names with @make (vm_view_declare) and, where the
 *  core has it, @unmake (vm_view_unmake), @ud for both. In init. 1: the
 *  views are declared (made when asked for); 0: an older core without
 *  vm_view_declare (make them with the VM's state); a negative errno. */
int lazy_views_declare(const ddm_host *h, ddm_plugin *self, const char *const *names, size_t n,
                       ddm_view_make_fn make, ddm_view_unmake_fn unmake, void *ud);

/** The number of entries of the array @a (names or slots): a caller
 *  checks at compile time that its names and slots are as many. */
#define LAZY_VIEWS_N(a) (sizeof(a) / sizeof((a)[0]))

/** The slot of @names[i] == @name among @slots, or NULL: a pointer into
 *  the caller's own state (the address of one of its ddm_view pointers),
 *  owned by the caller. */
ddm_view **lazy_views_slot(const char *const *names, ddm_view **const *slots, size_t n,
                           const char *name);

/** An unmake's work on @slot: free its view (view_free) and set it NULL.
 *  1 if there was one, 0 if not. */
int lazy_views_free(const ddm_host *h, ddm_view **slot);

#endif /* DDM_PLUGINS_COMMON_LAZYVIEWS_H */
