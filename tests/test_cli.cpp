// The torsh CLI: every command has --help; unknown commands, options and bad
// values are usage errors (exit status 2) that say what was wrong; every
// documented option keeps working.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "subprocess.hpp"
#include "torsh/model/model_cache.hpp"

using torsh::test::run;

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

torsh::test::Run torsh_cmd(const std::string& args) { return run(quote(torsh::test::torsh_cli()) + " " + args); }

#define REQUIRE_CLI() \
  if (torsh::test::torsh_cli().empty()) GTEST_SKIP() << "the torsh CLI is not built"

// A quick case, so a parser that ignores what it does not know runs a few
// milliseconds of benchmark instead of the whole suite.
const std::string kQuick = "--filter add_f32_4 --min-seconds 0";

}  // namespace

TEST(Cli, EveryCommandHasHelp) {
  REQUIRE_CLI();
  for (const std::string cmd : {"info", "demo", "bench", "run"}) {
    for (const std::string flag : {"--help", "-h"}) {
      const auto r = torsh_cmd(cmd + " " + flag);
      EXPECT_EQ(r.status, 0) << cmd << " " << flag << ": " << r.out;
      EXPECT_NE(r.out.find("Usage: torsh " + cmd), std::string::npos) << cmd << " " << flag << ": " << r.out;
    }
  }
  const auto bench = torsh_cmd("bench --help");
  EXPECT_EQ(bench.out.find("torsh bench on"), std::string::npos) << "--help ran the suite";
  for (const char* opt :
       {"--json", "--filter", "--backend", "--threads", "--min-seconds", "--profile", "--profile-max-events", "--list"})
    EXPECT_NE(bench.out.find(opt), std::string::npos) << opt;
  const auto top = torsh_cmd("--help");
  EXPECT_EQ(top.status, 0);
  for (const char* cmd : {"info", "demo", "bench"}) EXPECT_NE(top.out.find(cmd), std::string::npos) << top.out;
  EXPECT_EQ(torsh_cmd("help").status, 0);
  const auto help_bench = torsh_cmd("help bench");
  EXPECT_EQ(help_bench.status, 0);
  EXPECT_NE(help_bench.out.find("Usage: torsh bench"), std::string::npos) << help_bench.out;
}

TEST(Cli, NoCommandIsAUsageError) {
  REQUIRE_CLI();
  const auto r = torsh_cmd("");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("info"), std::string::npos) << r.out;
}

TEST(Cli, UnknownCommandIsAUsageError) {
  REQUIRE_CLI();
  const auto r = torsh_cmd("benchh");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown command 'benchh'"), std::string::npos) << r.out;
}

TEST(Cli, UnknownOptionsAreUsageErrors) {
  REQUIRE_CLI();
  for (const std::string& args :
       std::vector<std::string>{"bench " + kQuick + " --nosuchflag", "bench " + kQuick + " extra", "info --bogus",
                                "info --json --bogus", "demo --sizee 8", "demo --size 8 --backend cpu --fast"}) {
    const auto r = torsh_cmd(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_EQ(r.out.find("torsh bench on"), std::string::npos) << args << " ran the suite";
    EXPECT_NE(r.out.find("--help"), std::string::npos) << args << ": the error says where the options are: " << r.out;
  }
  EXPECT_NE(torsh_cmd("bench " + kQuick + " --nosuchflag").out.find("--nosuchflag"), std::string::npos);
}

TEST(Cli, BadValuesAreUsageErrors) {
  REQUIRE_CLI();
  const std::string quick = "bench --filter add_f32_4 ";
  for (const std::string& args :
       std::vector<std::string>{quick + "--min-seconds -1", quick + "--min-seconds nan", quick + "--min-seconds inf",
                                quick + "--min-seconds abc", quick + "--min-seconds",
                                quick + "--min-seconds 0 --threads 0", quick + "--min-seconds 0 --threads -2",
                                quick + "--min-seconds 0 --threads two", quick + "--min-seconds 0 --backend nosuch",
                                quick + "--min-seconds 0 --profile", quick + "--min-seconds 0 --profile-max-events 5",
                                quick + "--min-seconds 0 --profile t.json --profile-keep middle", "demo --size abc",
                                "demo --size 99999999999", "demo --backend nosuch"}) {
    const auto r = torsh_cmd(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_EQ(r.out.find("torsh bench on"), std::string::npos) << args << " ran the suite";
  }
  const auto nan = torsh_cmd(quick + "--min-seconds nan");
  EXPECT_NE(nan.out.find("--min-seconds"), std::string::npos) << nan.out;
  EXPECT_NE(nan.out.find("finite"), std::string::npos) << nan.out;
}

TEST(Cli, FilterMatchingNothingIsAnError) {
  REQUIRE_CLI();
  const auto r = torsh_cmd("bench --filter no_such_case --min-seconds 0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no_such_case"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--list"), std::string::npos) << "the error says how to see the names: " << r.out;
}

TEST(Cli, ListNamesTheCasesAndRunsNone) {
  REQUIRE_CLI();
  const auto all = torsh_cmd("bench --list");
  EXPECT_EQ(all.status, 0) << all.out;
  for (const char* name : {"matmul_f32_256", "add_f32_4", "graph_eager_100ops_f32_64", "pool_mixed_bestfit"})
    EXPECT_NE(all.out.find(name), std::string::npos) << name << " missing from " << all.out;
  EXPECT_EQ(all.out.find(" ms"), std::string::npos) << "--list ran cases: " << all.out;
  const auto some = torsh_cmd("bench --list --filter matmul_f32");
  EXPECT_EQ(some.status, 0);
  EXPECT_NE(some.out.find("matmul_f32_1024"), std::string::npos);
  EXPECT_EQ(some.out.find("add_f32_4"), std::string::npos);
}

TEST(Cli, DocumentedOptionsKeepTheirMeaning) {
  REQUIRE_CLI();
  const auto version = torsh_cmd("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.rfind("torsh ", 0), 0u) << version.out;

  const auto info = torsh_cmd("info --json");
  ASSERT_EQ(info.status, 0) << info.out;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_TRUE(j.contains("backends"));
  EXPECT_TRUE(j.contains("recommended"));
  const auto text = torsh_cmd("info");
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("Available Backends"), std::string::npos);

  const auto demo = torsh_cmd("demo --backend cpu --size 16");
  EXPECT_EQ(demo.status, 0) << demo.out;
  EXPECT_NE(demo.out.find("A 16x32"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("OK"), std::string::npos) << demo.out;

  const auto bench = torsh_cmd("bench --json --filter add_f32_4 --backend cpu --threads 1 --min-seconds 0");
  ASSERT_EQ(bench.status, 0) << bench.out;
  const auto line = nlohmann::json::parse(bench.out);
  EXPECT_EQ(line["name"], "add_f32_4");
  EXPECT_EQ(line["backend"], "cpu");
}

TEST(Cli, ProfileWritesATraceWithTheDropCount) {
  REQUIRE_CLI();
  const std::string trace = ::testing::TempDir() + "torsh_cli_trace.json";
  std::filesystem::remove(trace);
  const auto r = torsh_cmd("bench " + kQuick + " --profile " + quote(trace) + " --profile-max-events 10");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("events dropped from the trace (cap 10"), std::string::npos) << r.out;
  std::ifstream f(trace);
  ASSERT_TRUE(f) << trace;
  const auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j["otherData"]["kept_events"], 10);
  EXPECT_GT(j["otherData"]["dropped_events"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["otherData"]["max_events"], 10);
}

TEST(Cli, RunChecksItsOptions) {
  REQUIRE_CLI();
  const auto help = torsh_cmd("run --help");
  EXPECT_EQ(help.status, 0) << help.out;
  for (const char* opt : {"--prompt", "--chat", "--backend", "--max-tokens", "--temp", "--top-k", "--top-p", "--seed",
                          "--ctx", "--threads", "--activations", "--kv-type", "--parallel", "--prompt-file"})
    EXPECT_NE(help.out.find(opt), std::string::npos) << opt;
  EXPECT_NE(help.out.find("TEMPERATURE>=0"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("SECONDS"), std::string::npos) << help.out;
  for (const std::string& args : std::vector<std::string>{
           "run", "run --prompt hi --temp -1", "run --prompt hi --temp nan", "run --prompt hi --top-p 0",
           "run --prompt hi --top-p 1.5", "run --prompt hi --top-k -1", "run --prompt hi --max-tokens -3",
           "run --prompt hi --backend nosuch", "run --prompt hi --ctx -1", "run --prompt hi --bogus",
           "run --prompt hi --activations int4", "run --prompt hi --seed -1",
           "run --prompt hi --seed 18446744073709551616", "run --prompt hi --seed 12x", "run --prompt hi --kv-type q4",
           "run --prompt hi --parallel 0", "run --prompt hi --parallel 2x", "run --prompt-file /nonexistent/p.txt",
           "run --prompt hi --prompt-file /etc/hostname"}) {
    const auto r = torsh_cmd(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
  }
  // A file that is not a model: a clear error naming it, exit status 1, no crash.
  const auto missing = torsh_cmd("run /nonexistent/m.gguf --prompt hi");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_NE(missing.out.find("/nonexistent/m.gguf"), std::string::npos) << missing.out;
}

TEST(Cli, RunAnswersAChatPromptWithTokensPerSecond) {
  REQUIRE_CLI();
  if (!torsh::model::find_model(torsh::model::kSmolLM2FileName))
    GTEST_SKIP() << "the model is not cached (scripts/fetch-model.sh)";
  for (const char* acts : {"int16", "int8"}) {
    const auto r = torsh_cmd(std::string("run --backend cpu --chat --max-tokens 8 --ctx 128 --activations ") + acts +
                             " --prompt 'What is the capital of France?'");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("memory: weights"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("generation: 8 tokens"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tokens/s"), std::string::npos) << r.out;
  }
}

// Several sequences decoded together: each continuation under its number,
// then the aggregate rate; prompts from a file likewise.
TEST(Cli, RunDecodesSeveralSequencesTogether) {
  REQUIRE_CLI();
  if (!torsh::model::find_model(torsh::model::kSmolLM2FileName))
    GTEST_SKIP() << "the model is not cached (scripts/fetch-model.sh)";
  const auto r = torsh_cmd(
      "run --backend cpu --max-tokens 6 --ctx 64 --parallel 3 --temp 0.8 --kv-type f32 --prompt "
      "'The capital of France is'");
  EXPECT_EQ(r.status, 0) << r.out;
  for (const char* tag : {"[1] The capital", "[2] The capital", "[3] The capital", "3 sequences", "over all sequences",
                          "x 3 sequences, f32 KV cache"})
    EXPECT_NE(r.out.find(tag), std::string::npos) << tag << "\n" << r.out;
  const std::string file = ::testing::TempDir() + "torsh_cli_prompts.txt";
  std::ofstream(file) << "One, two,\n\nThe sky is\n";
  const auto f = torsh_cmd("run --backend cpu --max-tokens 4 --ctx 64 --prompt-file " + file);
  EXPECT_EQ(f.status, 0) << f.out;
  EXPECT_NE(f.out.find("[1] One, two,"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("[2] The sky is"), std::string::npos) << f.out;
  EXPECT_EQ(f.out.find("[3]"), std::string::npos) << f.out;
  std::ofstream(file) << "\n\n";
  const auto empty = torsh_cmd("run --backend cpu --prompt-file " + file);
  EXPECT_EQ(empty.status, 2) << empty.out;
  EXPECT_NE(empty.out.find("no prompt"), std::string::npos) << empty.out;
}

// Loading the WebGPU plugin without a runtime folder (servers, containers, CI)
// must not put Mesa's "error: XDG_RUNTIME_DIR ..." in the user's terminal: the
// library switches off the Vulkan layer that asks Wayland, not the user.
TEST(Cli, InfoPrintsNoErrorLinesWithoutARuntimeFolder) {
  REQUIRE_CLI();
  const auto r = run("env -u XDG_RUNTIME_DIR -u NODEVICE_SELECT " + quote(torsh::test::torsh_cli()) + " info");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("error:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("XDG_RUNTIME_DIR"), std::string::npos) << r.out;
}

// More CPU threads than cores: a note says so, and the oversubscribed pool
// sleeps instead of spinning, so a short run stays short (it took minutes
// when 256 spinning threads shared 2 cores). The largest seed is accepted.
// `torsh info FILE` reads any file the reader parses, and says which tensor
// types have no kernels here (the file `torsh run` would refuse).
TEST(Cli, InfoDescribesAModelFileAndWhatItCannotRun) {
  REQUIRE_CLI();
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("torsh_cli_info_" + std::to_string(::getpid()) + ".gguf");
  torsh::test::GgufWriter w;
  w.kv("general.architecture", torsh::test::gv::str("llama"));
  w.tensor({"blk.0.ffn_down.weight", {256, 2}, 16, torsh::test::Bytes(2 * 66, std::byte{0})});  // iq2_xxs
  w.tensor({"output_norm.weight", {256}, 0, torsh::test::Bytes(256 * 4, std::byte{0})});
  {
    const auto bytes = w.build();
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const auto r = torsh_cmd("info --tensors " + quote(file.string()));
  fs::remove(file);
  EXPECT_EQ(r.status, 0) << r.out;
  for (const char* needle : {"GGUF v3", "2 tensors", "general.architecture", "iq2_xxs", "no kernels here",
                             "torsh run refuses this file: no kernels for iq2_xxs (e.g. blk.0.ffn_down.weight)",
                             "blk.0.ffn_down.weight", "{256, 2}", "f32"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << " in:\n" << r.out;
  const auto model = torsh::model::find_model(torsh::model::kSmolLM2FileName);
  if (!model) return;
  const auto ok = torsh_cmd("info " + quote(*model));
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("every tensor type has kernels here"), std::string::npos) << ok.out;
  EXPECT_NE(torsh_cmd("info /nonexistent.gguf").status, 0);
}

TEST(Cli, OversubscribedThreadsAreNotedAndStayUsable) {
  REQUIRE_CLI();
  if (!torsh::model::find_model(torsh::model::kSmolLM2FileName))
    GTEST_SKIP() << "the model is not cached (scripts/fetch-model.sh)";
  const auto r = run("timeout 120 " + quote(torsh::test::torsh_cli()) +
                     " run --backend cpu --threads 256 --max-tokens 4 --ctx 64 --seed 18446744073709551615 "
                     "--prompt 'The capital of France is'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: --threads 256"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("generation: 4 tokens"), std::string::npos) << r.out;
}

// A FIFO at the model path is refused at once (open() used to wait for a writer forever).
TEST(Cli, RunRefusesAFifoWithoutBlocking) {
  REQUIRE_CLI();
  const std::string fifo = ::testing::TempDir() + "torsh_cli_fifo.gguf";
  std::filesystem::remove(fifo);
  ASSERT_EQ(run("mkfifo " + quote(fifo)).status, 0);
  const auto r = run("timeout 60 " + quote(torsh::test::torsh_cli()) + " run " + quote(fifo) + " --prompt hi");
  std::filesystem::remove(fifo);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
}
