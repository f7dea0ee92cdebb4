/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon's own resource use for /metrics (DdmMetricsProcess): CPU time,
 * memory, open file descriptors and start time, read from /proc/self as
 * Prometheus client libraries read them for their process_* metrics.
 */
#include "web/metrics_proc.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Seconds since the epoch at which the system booted (/proc/stat btime). */
static double boot_time(void)
{
    g_autofree char *stat = NULL;
    if (!g_file_get_contents("/proc/stat", &stat, NULL, NULL))
        return 0;
    const char *p = strstr(stat, "\nbtime ");
    return p ? g_ascii_strtod(p + 7, NULL) : 0;
}

gboolean ddm_metrics_process_read(DdmMetricsProcess *p)
{
    g_autofree char *stat = NULL;
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    memset(p, 0, sizeof *p);
    if (ticks <= 0 || page <= 0 || !g_file_get_contents("/proc/self/stat", &stat, NULL, NULL))
        return FALSE;
    /* "pid (comm) state ..." : comm may hold spaces and ')', so from the last ')' */
    const char *rest = strrchr(stat, ')');
    if (rest == NULL)
        return FALSE;
    g_auto(GStrv) f = g_strsplit(rest + 2, " ", -1);
    /* fields from "state" (3rd of stat(5)) on: utime 14, stime 15, starttime 22,
     * vsize 23, rss 24 -> indexes 11, 12, 19, 20, 21 here */
    if (g_strv_length(f) < 22)
        return FALSE;
    p->cpu_seconds = (g_ascii_strtod(f[11], NULL) + g_ascii_strtod(f[12], NULL)) / (double)ticks;
    p->start_time_seconds = boot_time() + g_ascii_strtod(f[19], NULL) / (double)ticks;
    p->virtual_bytes = g_ascii_strtod(f[20], NULL);
    p->resident_bytes = g_ascii_strtod(f[21], NULL) * (double)page;
    DIR *d = opendir("/proc/self/fd");
    if (d != NULL) {
        struct dirent *e;
        int n = 0;
        while ((e = readdir(d)) != NULL)
            if (e->d_name[0] != '.')
                n++;
        closedir(d);
        p->open_fds = n - 1; /* not the directory's own fd */
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        p->max_fds = rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur;
    return TRUE;
}
