/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the VURT text decoders (plugins/viewdebug/vudecode.c), the
 * op 1 view tree and the op 3 theme dump, and the tree's JSON document
 * (vujson.c).
 *
 * Input: one selector byte (even: tree, odd: theme), then the reply text.
 * Invariants, tree: preorder (a parent comes before its child and is one
 * level up), the children counts add up, depth and counts within their
 * caps, every property inside its view's range; the tree's JSON (with
 * and without properties) is valid UTF-8 that json-glib reads back, with
 * the view count and the root's class; theme: names and values
 * set; a failure gives a reason and leaves nothing allocated.
 */
#include <string.h>

#include <json-glib/json-glib.h>

#include "plugins/viewdebug/vudecode.h"
#include "plugins/viewdebug/vujson.h"
#include "tests/fuzz/fuzz.h"

/* The document json-glib reads: the view count, the root's class (its
 * bytes are the dump's when they are UTF-8). */
static void check_json(const vd_tree *t, int properties)
{
    size_t len = 0;
    char *doc = vd_tree_json(t, "w/\x01\xff", properties, (size_t)64 << 20, &len);
    JsonParser *p = json_parser_new();
    JsonObject *o, *root;

    FUZZ_CHECK(doc != NULL && strlen(doc) == len);
    FUZZ_CHECK(g_utf8_validate(doc, (gssize)len, NULL));
    FUZZ_CHECK(json_parser_load_from_data(p, doc, (gssize)len, NULL));
    o = json_node_get_object(json_parser_get_root(p));
    FUZZ_CHECK(json_object_get_int_member(o, "views") == (gint64)t->n_views);
    FUZZ_CHECK(json_object_get_boolean_member(o, "properties") == !!properties);
    root = t->n_views ? json_object_get_object_member(o, "root") : NULL;
    FUZZ_CHECK(t->n_views == 0 || root != NULL);
    if (root && g_utf8_validate(t->views[0].cls, -1, NULL))
        FUZZ_CHECK(strcmp(json_object_get_string_member(root, "class"), t->views[0].cls) == 0);
    g_object_unref(p);
    free(doc);
}

static void check_tree(const uint8_t *data, size_t size)
{
    vd_tree t;
    char why[256] = "";
    size_t i, kids = 0;

    if (vd_parse_tree(data, size, &t, why, sizeof why) != 0) {
        FUZZ_CHECK(why[0] != 0);
        FUZZ_CHECK(t.views == NULL && t.text == NULL && t.props == NULL);
        return;
    }
    FUZZ_CHECK(t.n_views <= VD_MAX_VIEWS && t.n_props <= VD_MAX_PROPS);
    for (i = 0; i < t.n_views; i++) {
        const vd_view *v = &t.views[i];
        FUZZ_CHECK(v->cls != NULL && v->hash != NULL && v->cls[0] != 0 && v->hash[0] != 0);
        FUZZ_CHECK(v->depth <= VD_MAX_DEPTH);
        if (i == 0) {
            FUZZ_CHECK(v->parent == -1 && v->depth == 0);
        } else {
            FUZZ_CHECK(v->parent >= 0 && (size_t)v->parent < i);
            FUZZ_CHECK(t.views[v->parent].depth + 1 == v->depth);
        }
        FUZZ_CHECK(v->first_prop + v->n_props <= t.n_props);
        for (size_t p = 0; p < v->n_props; p++)
            FUZZ_CHECK(t.props[v->first_prop + p].name && t.props[v->first_prop + p].value);
        kids += v->children;
    }
    FUZZ_CHECK(t.n_views == 0 || kids == t.n_views - 1);
    check_json(&t, 0);
    check_json(&t, 1);
    vd_tree_clear(&t);
}

static void check_theme(const uint8_t *data, size_t size)
{
    vd_theme th;
    char why[256] = "";

    if (vd_parse_theme(data, size, &th, why, sizeof why) != 0) {
        FUZZ_CHECK(why[0] != 0);
        FUZZ_CHECK(th.names == NULL && th.text == NULL);
        return;
    }
    FUZZ_CHECK(th.n <= VD_MAX_THEME);
    for (size_t i = 0; i < th.n; i++)
        FUZZ_CHECK(th.names[i] != NULL && th.values[i] != NULL);
    vd_theme_clear(&th);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t sel = fuzz_u8(&in);

    if (sel & 1)
        check_theme(in.p, in.n);
    else
        check_tree(in.p, in.n);
    return 0;
}
