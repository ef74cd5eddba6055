/* leakhound - SPDX-License-Identifier: MIT
 *
 * api.c: the public API of include/leakhound.h, as implemented by the agent. A program
 * that declares these weak finds them only when the agent is preloaded.
 */
#include "../include/leakhound.h"

#include "agent.h"
#include "record.h"
#include "format.h"
#include "snapshot.h"

#define LH_EXPORT LH_ENTRY

static void
label_record(uint8_t type, const char *label, int trigger)
{
    if (!lh_recording() || lh_tls.guard) {
        return;
    }
    lh_rec_t r;
    lh_tls.guard = 1;
    if (lh_rec_begin(&r, 0) == 0) {
        lh_rec_label(&r, type, label, trigger);
        lh_rec_end(&r);
    }
    lh_tls.guard = 0;
}

LH_EXPORT void
lh_mark(const char *label)
{
    label_record(LH_REC_MARK, label, 0);
}

LH_EXPORT void
lh_snapshot(const char *label)
{
    if (!lh_recording() || lh_tls.guard) {
        return;
    }
    lh_tls.guard = 1;
    lh_snapshot_take(label ? label : "", LH_SNAP_API, 1);
    lh_tls.guard = 0;
}

LH_EXPORT void
lh_tag(void *ptr, const char *type)
{
    if (!ptr || !lh_recording() || lh_tls.guard) {
        return;
    }
    lh_rec_t r;
    lh_tls.guard = 1;
    if (lh_rec_begin(&r, 0) == 0) {
        lh_rec_tag(&r, ptr, type);
        lh_rec_end(&r);
    }
    lh_tls.guard = 0;
}

LH_EXPORT const char *
lh_agent_version(void)
{
    return LH_AGENT_VERSION;
}
