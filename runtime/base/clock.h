/* The one clock the runtime times itself with. */
#ifndef BYOCL_BASE_CLOCK_H
#define BYOCL_BASE_CLOCK_H

/* Milliseconds of CLOCK_MONOTONIC: for differences only (it starts anywhere). */
double base_now_ms(void);

#endif
