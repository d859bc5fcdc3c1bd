// recovery/stats.cc: adding and subtracting counter sets (sums over processes,
// differences over a timed region), generated from the field list.
#include "recovery/stats.h"

namespace bsp::recovery {

ChannelStats& ChannelStats::operator+=(const ChannelStats& o) {
#define BSP_CHANNEL_STATS_ADD(field, key, meaning) field += o.field;
  BSP_CHANNEL_STATS_FIELDS(BSP_CHANNEL_STATS_ADD)
#undef BSP_CHANNEL_STATS_ADD
  return *this;
}

ChannelStats& ChannelStats::operator-=(const ChannelStats& o) {
#define BSP_CHANNEL_STATS_SUBTRACT(field, key, meaning) field -= o.field;
  BSP_CHANNEL_STATS_FIELDS(BSP_CHANNEL_STATS_SUBTRACT)
#undef BSP_CHANNEL_STATS_SUBTRACT
  return *this;
}

}  // namespace bsp::recovery
