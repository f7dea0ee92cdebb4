/* SPDX-License-Identifier: Apache-2.0
 *
 * <ddmon/ticklist.h> alone, first and only include: it must bring
 * everything it needs; a node goes on and off a list and is found again.
 */
#include <ddmon/ticklist.h>

int sdk_only_ticklist(void);

typedef struct only_vm {
    int id;
    ddm_tick_node tick;
} only_vm;

int sdk_only_ticklist(void)
{
    /* members were appended in 1.7: zero it whole; a static's zeroes, as
     * `{0}` draws -Wmissing-field-initializers from C++ compilers */
    static ddm_tick_list zero_list;
    ddm_tick_list l = zero_list;
    only_vm a = {1, {0, 0, 0}}, b = {2, {0, 0, 0}};
    if (!ddm_tick_list_idle(&l))
        return 0;
    ddm_tick_list_add(&l, &a.tick); /* no timer bound (1.7): wakes nothing */
    ddm_tick_list_keep(&l, &b.tick, 1);
    ddm_tick_list_add(&l, &a.tick); /* twice: still once */
    if (l.head != &b.tick || l.head->next != &a.tick || a.tick.next != 0)
        return 0;
    if (DDM_TICK_OWNER(l.head, only_vm, tick)->id != 2)
        return 0;
    ddm_tick_list_keep(&l, &b.tick, 0);
    ddm_tick_list_del(&l, &b.tick);
    return l.head == &a.tick && a.tick.prev == 0 && !b.tick.on && a.tick.on &&
           !ddm_tick_list_idle(&l);
}
