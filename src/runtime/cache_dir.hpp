#pragma once
// Where the library keeps what it learns across processes (autotune choices,
// kernel binaries): $XDG_CACHE_HOME/torsh, else $HOME/.cache/torsh (HOME from
// the password database when unset), else $TMPDIR/torsh-<uid>. Relative
// values of XDG_CACHE_HOME and HOME are ignored, as the XDG rules say: they
// would put the cache wherever the process happens to run.
#include <string>

namespace torsh::detail {

std::string user_cache_root();

}  // namespace torsh::detail
