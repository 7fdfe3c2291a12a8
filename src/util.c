/* util.c — small shared helpers. */
#include <uv.h>

#include "rr.h"

int64_t rr_now_ms(void)
{
    return (int64_t)(uv_hrtime() / 1000000u);
}
