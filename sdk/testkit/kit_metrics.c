/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's metrics (ABI 1.3): register_metric with the core's rules
 * (the SDK's ddm_metric_family_check; only in init; one declaration of a
 * name per plugin; DDM_METRIC_FAMILIES_MAX) and vm_metric (a declared
 * name; distinct label values, present iff the family has a label; at
 * most DDM_METRIC_SAMPLES_MAX; a family's samples replaced whole; values
 * cut to DDM_METRIC_LABEL_VALUE_MAX bytes at a UTF-8 boundary), and what a
 * test asks: a family declared, a sample's value, how many samples.
 */
#include "kit-private.h"

typedef struct fh_metric_family {
    char *name, *unit, *help, *label, *view;
    ddm_metric_type type;
} fh_metric_family;

typedef struct fh_metric_sample {
    char *name, *label; /* label NULL for a family without one */
    double value;
} fh_metric_sample;

static fh_metric_family *find_family(fake_host *fh, const char *name)
{
    size_t i;
    for (i = 0; i < fh->metric_families.n; i++) {
        fh_metric_family *f = fh->metric_families.v[i];
        if (strcmp(f->name, name) == 0)
            return f;
    }
    return NULL;
}

int fh_register_metric(ddm_plugin *self, const ddm_metric_family *family)
{
    fake_host *fh = host_of(self);
    fh_metric_family *f;
    int rc;
    if (!fh->in_init) {
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: register_metric outside init refused");
        return -EPERM;
    }
    rc = ddm_metric_family_check(family);
    if (rc != 0)
        return rc;
    if (find_family(fh, family->name))
        return -EEXIST;
    if (fh->metric_families.n >= DDM_METRIC_FAMILIES_MAX)
        return -ENOSPC;
    f = xcalloc(1, sizeof *f);
    f->name = xstrdup(family->name);
    f->unit = xstrdup(family->unit);
    f->help = xstrdup(family->help);
    f->label = xstrdup(family->label);
    f->view = xstrdup(family->view);
    f->type = family->type;
    vec_push(&fh->metric_families, f);
    return 0;
}

static void sample_free(fh_metric_sample *s)
{
    free(s->name);
    free(s->label);
    free(s);
}

/* Drop @vm's samples of @name (every family if NULL). */
static void drop_samples(ddm_vm *vm, const char *name)
{
    size_t i;
    for (i = vm->metrics.n; i-- > 0;) {
        fh_metric_sample *s = vm->metrics.v[i];
        if (name == NULL || strcmp(s->name, name) == 0) {
            vec_remove_at(&vm->metrics, i);
            sample_free(s);
        }
    }
}

/* A copy of @s cut to DDM_METRIC_LABEL_VALUE_MAX bytes at a UTF-8 boundary. */
static char *capped(const char *s)
{
    size_t n = strlen(s);
    char *c;
    if (n > DDM_METRIC_LABEL_VALUE_MAX) {
        n = DDM_METRIC_LABEL_VALUE_MAX;
        while (n > 0 && (((unsigned char)s[n]) & 0xC0) == 0x80)
            n--;
    }
    c = xcalloc(n + 1, 1);
    memcpy(c, s, n);
    return c;
}

int fh_vm_metric(ddm_plugin *self, ddm_vm *vm, const char *name, const ddm_metric_sample *samples,
                 size_t n)
{
    fake_host *fh = host_of(self);
    const fh_metric_family *f;
    size_t i, j;
    assert_non_null(vm);
    assert_non_null(name);
    if (vm->gone)
        return -EINVAL;
    f = find_family(fh, name);
    if (f == NULL)
        return -ENOENT;
    if (n > DDM_METRIC_SAMPLES_MAX)
        return -E2BIG;
    if ((n > 0 && samples == NULL) || (f->label == NULL && n > 1))
        return -EINVAL;
    for (i = 0; i < n; i++) {
        if ((f->label != NULL) != (samples[i].label != NULL))
            return -EINVAL;
        for (j = 0; j < i && f->label; j++)
            if (strcmp(samples[i].label, samples[j].label) == 0)
                return -EINVAL;
    }
    drop_samples(vm, name);
    for (i = 0; i < n; i++) {
        fh_metric_sample *s = xcalloc(1, sizeof *s);
        s->name = xstrdup(name);
        s->label = samples[i].label ? capped(samples[i].label) : NULL;
        s->value = samples[i].value;
        vec_push(&vm->metrics, s);
    }
    fh->metric_calls++;
    return 0;
}

void fh_vm_metrics_clear(ddm_vm *vm)
{
    drop_samples(vm, NULL);
    vec_clear(&vm->metrics);
}

void fh_metrics_free_all(fake_host *fh)
{
    size_t i;
    for (i = 0; i < fh->metric_families.n; i++) {
        fh_metric_family *f = fh->metric_families.v[i];
        free(f->name);
        free(f->unit);
        free(f->help);
        free(f->label);
        free(f->view);
        free(f);
    }
    vec_clear(&fh->metric_families);
}

int fake_host_metric_family(fake_host *fh, const char *name, ddm_metric_family *out)
{
    const fh_metric_family *f = find_family(fh, name);
    if (f == NULL)
        return 0;
    if (out) {
        out->name = f->name;
        out->type = f->type;
        out->unit = f->unit;
        out->help = f->help;
        out->label = f->label;
        out->view = f->view;
    }
    return 1;
}

int fake_host_metric(fake_host *fh, ddm_vm *vm, const char *name, const char *label, double *value)
{
    size_t i;
    (void)fh;
    for (i = 0; i < vm->metrics.n; i++) {
        const fh_metric_sample *s = vm->metrics.v[i];
        if (strcmp(s->name, name) == 0 &&
            (label == NULL ? s->label == NULL : s->label != NULL && strcmp(s->label, label) == 0)) {
            if (value)
                *value = s->value;
            return 1;
        }
    }
    return 0;
}

size_t fake_host_metric_samples(fake_host *fh, ddm_vm *vm, const char *name)
{
    size_t i, n = 0;
    (void)fh;
    for (i = 0; i < vm->metrics.n; i++)
        if (strcmp(((const fh_metric_sample *)vm->metrics.v[i])->name, name) == 0)
            n++;
    return n;
}
