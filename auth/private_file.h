// auth/private_file.h: creating the files a job writes (--profile, --trace, bspprof's
// reports) so that nobody else can read them or make them land elsewhere. A file is made
// anew, mode 0600, never through a symbolic link and never by reopening a file that is
// already there (another user may have made it, readable to them, or planted a link to
// a file of ours in a directory they can write to). An existing name is refused unless
// the user asked to overwrite; then it is unlinked (a link itself, never its target) and
// made anew the same way.
#pragma once

#include <string>

namespace bsp::auth {

// A descriptor open for writing on a new file at path (O_CREAT | O_EXCL | O_NOFOLLOW |
// O_CLOEXEC, mode 0600), or -1 with `error` saying why: "it exists (...); refusing ..."
// when the name is taken and overwrite is false, or the system's reason. The last component of
// path is never followed; the directories leading to it are the user's to choose.
int create_private_file(const std::string& path, bool overwrite, std::string& error);

// Moves the finished file `from` to `to`: replacing what is there when overwrite (the
// name itself, never a link's target), else refusing a name that has been taken since.
bool publish_private_file(const std::string& from, const std::string& to, bool overwrite, std::string& error);

// Where an existing name is refused, the hint to give: how to ask for overwriting.
inline constexpr const char* kOverwriteHint = "bsprun --overwrite (BSP_OVERWRITE=1) replaces it";

}  // namespace bsp::auth
