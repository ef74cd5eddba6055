/* leakhound - SPDX-License-Identifier: MIT
 *
 * svgutil.h: small helpers shared by the SVG and HTML views: XML escaping, byte units for
 * axes, nice tick steps.
 */
#ifndef LH_VIEW_SVGUTIL_H
#define LH_VIEW_SVGUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes s with &, <, >, " and ' escaped and control characters dropped; at most max
 * characters (0: all), with ".." appended when cut. */
void lh_xml_text(FILE *out, const char *s, size_t max);
/* A "nice" step (1, 2 or 5 times a power of ten) so that range / step is about n. */
double lh_nice_step(double range, int n);
/* Bytes in the unit that suits max ("KiB"...), for axis labels: returns the unit's size
 * and its name in *unit. */
double lh_axis_unit(double max, const char **unit);

#endif /* LH_VIEW_SVGUTIL_H */
