#include "common/array/engine_stats.h"

namespace zarrd {

EngineStats& GlobalEngineStats() {
  static EngineStats stats;
  return stats;
}

}  // namespace zarrd
