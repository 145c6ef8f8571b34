// The process-wide precision settings (torsh/runtime/precision.hpp).
#include <gtest/gtest.h>

#include <cstdlib>

#include "torsh/torsh.hpp"

using namespace torsh;

TEST(Precision, Tf32IsOffUnlessAllowed) {
  const char* env = std::getenv("TORSH_ALLOW_TF32");
  EXPECT_EQ(precision::allow_tf32(), env != nullptr && std::string(env) == "1");
  precision::set_allow_tf32(true);
  EXPECT_TRUE(precision::allow_tf32());
  precision::set_allow_tf32(false);
  EXPECT_FALSE(precision::allow_tf32());
}
