// SPDX-License-Identifier: MIT
// Keeps a library target valid while a folder has no source of that kind.
namespace gpurent {
}
