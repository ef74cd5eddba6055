/* leakhound - SPDX-License-Identifier: MIT
 *
 * svgutil.c: SVG and HTML helpers.
 */
#include "svgutil.h"

#include <math.h>
#include <string.h>

/* The characters XML text and attributes escape; other control characters are dropped. */
static const char *const xml_esc[0x80] = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
};

void
lh_xml_text(FILE *out, const char *s, size_t max)
{
    size_t n = 0;
    if (!s) {
        return;
    }
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (max && n == max) {
            fputs("..", out);
            return;
        }
        if ((ch & 0xc0) != 0x80) {
            n++; /* count characters, not UTF-8 continuation bytes */
        }
        if (ch < 0x80 && xml_esc[ch]) {
            fputs(xml_esc[ch], out);
        } else if (ch >= 0x20 && ch != 0x7f) {
            fputc(ch, out);
        }
    }
}

double
lh_nice_step(double range, int n)
{
    if (range <= 0 || n <= 0) {
        return 1;
    }
    double raw = range / n;
    double p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

double
lh_axis_unit(double max, const char **unit)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double u = 1;
    int k = 0;
    while (max >= 1024 * u && k < 4) {
        u *= 1024;
        k++;
    }
    *unit = names[k];
    return u;
}
