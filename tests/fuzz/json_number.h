/* SPDX-License-Identifier: Apache-2.0
 *
 * A strict check of RFC 8259's number grammar, for tests of JSON text
 * written by hand (core/views/jq_text.c): json-glib's parser reads
 * numbers it would never accept from a strict parser (1e+17.0), so it
 * cannot be the judge. Header only; used by fuzz-jq-text and test-jq-text.
 */
#ifndef DDM_TESTS_JSON_NUMBER_H
#define DDM_TESTS_JSON_NUMBER_H

#include <stdbool.h>
#include <stddef.h>

/* number = [ "-" ] int [ frac ] [ exp ]; int = "0" / digit1-9 *DIGIT;
 * frac = "." 1*DIGIT; exp = ("e" / "E") [ "-" / "+" ] 1*DIGIT.
 * True when the @n bytes of @s are exactly one number. */
static inline bool json_number_is_strict(const char *s, size_t n)
{
    size_t i = 0;
#define DIGIT(k) ((k) < n && s[k] >= '0' && s[k] <= '9')
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0')
        i++;
    else if (DIGIT(i) && s[i] != '0')
        while (DIGIT(i))
            i++;
    else
        return false;
    if (i < n && s[i] == '.') {
        i++;
        if (!DIGIT(i))
            return false;
        while (DIGIT(i))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!DIGIT(i))
            return false;
        while (DIGIT(i))
            i++;
    }
#undef DIGIT
    return i == n;
}

#endif /* DDM_TESTS_JSON_NUMBER_H */
