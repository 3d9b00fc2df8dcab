#pragma once
// trun's output: task output arrives in arbitrary chunks from several nodes at once; it is
// written line by line per (rank, stream), so lines of different ranks never interleave
// mid-line. With `label` every line gets srun -l's prefix "<rank>: " (the rank right-aligned
// to the width of the largest rank, as srun does). A rank's unterminated last line is written
// (without adding a newline) when the rank ends (Flush). Thread-safe.
#include <cstdint>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>

namespace tessera::cli {

class RankOutput {
 public:
  // `stream` 1 -> out, 2 -> err. `ntasks` sets the label width.
  RankOutput(std::ostream& out, std::ostream& err, bool label, uint32_t ntasks);
  void Write(uint32_t rank, uint32_t stream, const std::string& data);
  // Writes what is left of the rank's partial lines (both streams).
  void Flush(uint32_t rank);
  void FlushAll();

 private:
  void Emit(uint32_t rank, uint32_t stream, const std::string& text);
  std::ostream& out_;
  std::ostream& err_;
  bool label_;
  int width_;
  std::mutex mu_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> partial_;
};

}  // namespace tessera::cli
