// examples/cpp/word_count.cc: counts the words of a text spread over the processes. Each
// word is owned by the process its hash names; every process sends (word, count) pairs
// of its part to the owners through a bsp::queue<std::string, int>, the owners add them
// up, and the counts are gathered, sorted, on rank 0.
// Usage: bsprun -n 4 ./word_count [FILE]   (without FILE: a built-in text)
#include <bsp/bsp.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char* kText =
    "the quick brown fox jumps over the lazy dog the dog sleeps and the fox runs "
    "a bulk synchronous parallel program is a sequence of supersteps and a superstep "
    "is local computation then communication then a barrier the barrier ends the superstep";

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text + " ") {
    if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
    if (c >= 'a' && c <= 'z') {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  std::string text = kText;
  if (argc > 1) {
    std::ifstream in(argv[1]);
    std::stringstream all;
    all << in.rdbuf();
    text = all.str();
  }
  return bsp::run(argc, argv, [&text](bsp::world& world) {
    std::vector<std::string> words = words_of(text);
    // This process's part of the text: a block of the words.
    bsp::block_partitioning part(words.size(), world.size());
    std::map<std::string, int> mine;
    for (std::size_t l = 0; l < part.local_size(world.rank()); ++l) ++mine[words[part.global(world.rank(), l)]];

    bsp::queue<std::string, int> to_owner(world);
    for (const auto& [word, count] : mine) {
      int owner = std::hash<std::string>()(word) % world.size();
      to_owner(owner).send(word, count);
    }
    world.sync();
    std::map<std::string, int> owned;
    for (const auto& [word, count] : to_owner) owned[word] += count;

    bsp::queue<std::string, int> to_root(world);
    for (const auto& [word, count] : owned) to_root(0).send(word, count);
    world.sync();
    if (world.rank() == 0) {
      std::vector<std::pair<int, std::string>> counts;
      long total = 0;
      for (const auto& [word, count] : to_root) {
        counts.push_back({-count, word});
        total += count;
      }
      std::sort(counts.begin(), counts.end());
      std::printf("%ld words, %zu distinct, on %d processes\n", total, counts.size(), world.size());
      for (std::size_t i = 0; i < counts.size() && i < 5; ++i) {
        std::printf("%6d %s\n", -counts[i].first, counts[i].second.c_str());
      }
    }
  });
}
