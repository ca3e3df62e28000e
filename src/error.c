/* Status strings and the thread-local last-error message. */
#include "internal.h"

#include <stdio.h>

static _Thread_local char last_error[1024];

const char *hk_last_error(void) { return last_error; }

void hk_clear_error(void) { last_error[0] = '\0'; }

void hk_format(char *buf, size_t size, const char *fmt, ...)
{
    if (!buf || size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

hk_status hk_fail(hk_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

const char *hk_status_string(hk_status status)
{
    switch (status) {
    case HK_OK: return "ok";
    case HK_ERR_INVALID_ARGUMENT: return "invalid argument";
    case HK_ERR_UNSUPPORTED: return "unsupported";
    case HK_ERR_NO_DEVICE: return "no device";
    case HK_ERR_OUT_OF_MEMORY: return "out of memory";
    case HK_ERR_RUNTIME: return "runtime error";
    case HK_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

int hk_version(void) { return HK_VERSION; }

const char *hk_version_string(void) { return HK_VERSION_TEXT; }
