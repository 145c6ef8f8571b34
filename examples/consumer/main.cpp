// Smallest torsh program: add two vectors on the auto-selected device.
#include <torsh/torsh.hpp>

#include <cstdio>

int main() {
  torsh::Backend dev = torsh::Backend::auto_select();
  const float a[] = {1, 2, 3}, b[] = {10, 20, 30};
  auto c = torsh::ops::add(dev.from_host(a, torsh::Shape{3}, torsh::DType::F32),
                           dev.from_host(b, torsh::Shape{3}, torsh::DType::F32));
  auto v = c.to_vector();
  std::printf("%s: %g %g %g\n", dev.name().c_str(), v[0], v[1], v[2]);
  return v[2] == 33.0f ? 0 : 1;
}
