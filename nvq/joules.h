/*
 * joules.h: energy as people read it (pure): joules under a watt-hour,
 * watt-hours under a kilowatt-hour, kilowatt-hours above; "unknown" where
 * NVML had no counter (never 0).  nvq show and nvq stats use it.
 */
#ifndef NVQ_JOULES_H
#define NVQ_JOULES_H

#include <stddef.h>

/* j joules (< 0: unknown) into buf: "512 J", "12.34 Wh", "1.520 kWh", "unknown". */
void	joules_fmt(double j, char *buf, size_t len);
/*
 * nvqd's per-GPU list, "UUID=JOULES:HOW,..." (JOULES "unknown" where
 * unknown), as "UUID 12.34 Wh alone, UUID unknown unknown" into buf; an
 * entry it cannot read is copied as it came.
 */
void	joules_list(const char *list, char *buf, size_t len);

#endif
