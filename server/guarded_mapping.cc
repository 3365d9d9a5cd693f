#include "server/guarded_mapping.h"

#include <signal.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <mutex>

namespace zarrd::server {
namespace {

// The signal handler reads this table without locks: a slot is live while `begin` is nonzero.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> lost{false};
  bool taken = false;  // under g_slots_mutex
};

std::array<Slot, GuardedMapping::kMaxMappings> g_slots;
std::mutex g_slots_mutex;
struct sigaction g_previous_action;

void OnSigbus(int, siginfo_t* info, void*) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    const uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= end) continue;
    void* replaced = ::mmap(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_WRITE,
                            MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (replaced != MAP_FAILED) {
      slot.lost.store(true, std::memory_order_release);
      return;  // the faulting access runs again, on a zero page
    }
    break;
  }
  // Not a guarded mapping: the action there before (by default, the end of the process) takes
  // the fault when the access runs again.
  ::sigaction(SIGBUS, &g_previous_action, nullptr);
}

Status InstallHandler() {
  static const Status installed = [] {
    struct sigaction action = {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGBUS, &action, &g_previous_action) != 0) {
      return ErrnoStatus(errno, "installing the SIGBUS handler for shared memory");
    }
    return OkStatus();
  }();
  return installed;
}

}  // namespace

Result<std::unique_ptr<GuardedMapping>> GuardedMapping::Adopt(uint8_t* data, size_t size) {
  Status installed = InstallHandler();
  if (!installed.ok()) {
    ::munmap(data, size);
    return installed;
  }
  std::lock_guard lock(g_slots_mutex);
  for (size_t i = 0; i < g_slots.size(); ++i) {
    Slot& slot = g_slots[i];
    if (slot.taken) continue;
    slot.taken = true;
    slot.lost.store(false, std::memory_order_relaxed);
    slot.end.store(reinterpret_cast<uintptr_t>(data) + size, std::memory_order_relaxed);
    slot.begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
    return std::unique_ptr<GuardedMapping>(new GuardedMapping(data, size, i));
  }
  ::munmap(data, size);
  return ResourceExhausted("zarrd holds " + std::to_string(kMaxMappings) +
                           " shared-memory regions already; unregister some first");
}

GuardedMapping::~GuardedMapping() {
  Slot& slot = g_slots[slot_];
  // Unguarded before unmapping: the address range may be reused by another mapping at once.
  slot.begin.store(0, std::memory_order_release);
  ::munmap(data_, size_);
  std::lock_guard lock(g_slots_mutex);
  slot.taken = false;
}

bool GuardedMapping::Intact(bool touch) const {
  if (touch && size_ > 0) {
    (void)*static_cast<volatile const uint8_t*>(data_ + size_ - 1);
  }
  return !g_slots[slot_].lost.load(std::memory_order_acquire);
}

}  // namespace zarrd::server
