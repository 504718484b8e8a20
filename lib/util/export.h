/* SPDX-License-Identifier: MIT */
/*
 * The one export macro.  The library is built with -fvisibility=hidden,
 * so a symbol is exported only when its definition says OMS_EXPORT and
 * lib/liboms.map names it (scripts/check-exports.sh checks both ways).
 */
#ifndef OMS_UTIL_EXPORT_H
#define OMS_UTIL_EXPORT_H

#define OMS_EXPORT __attribute__((visibility("default")))

#endif /* OMS_UTIL_EXPORT_H */
