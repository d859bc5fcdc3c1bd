// auth/job_secret.h: the job's secret, 128 random bits made by the launcher (bsprun, or
// pid 0 of a job started without one) and handed to its processes through an inherited
// descriptor: never the environment, never argv, never a file others can read. The
// environment carries only the descriptor's number (BSP_SECRET_FD); the process reads
// the secret and closes the descriptor before the program's code can see it.
#pragma once

#include <optional>
#include <string>

#include "auth/mac.h"

namespace bsp::auth {

inline constexpr const char* kSecretFdVariable = "BSP_SECRET_FD";

// 128 fresh random bits.
Key make_job_secret();

// A descriptor holding key (an unlinked memory file, mode 0600, close-on-exec) for
// children to inherit: each clears close-on-exec between fork and exec, and the launcher
// closes it once they are started. Its number goes into BSP_SECRET_FD.
int secret_descriptor(const Key& key);

// The secret handed down by the launcher: reads BSP_SECRET_FD, closes it and removes the
// variable. nullopt when there is none; throws std::runtime_error when it is unreadable.
std::optional<Key> inherited_job_secret();

}  // namespace bsp::auth
