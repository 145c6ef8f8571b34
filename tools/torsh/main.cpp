#include <cstdio>
#include "torsh/torsh.hpp"
int main() { std::fputs(torsh::backend_summary().c_str(), stdout); }
