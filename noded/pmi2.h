#pragma once
// Issue 19 (h19 s6): the PMI-2 server of a step's tasks on this node (trun --mpi=pmi2), as a
// pure state machine; TaskSet (task_set.h) owns the sockets and feeds it.
//
// Wire protocol (what MPICH's and Open MPI's PMI-2 clients speak over PMI_FD): after the
// PMI-1-style handshake "cmd=init pmi_version=2 pmi_subversion=0\n" (answered
// "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"), each message is a 6-character
// decimal length followed by that many bytes "cmd=NAME;key=value;...;" (";;" is a literal ';'
// inside a value). Commands served: fullinit, job-getid, info-getjobattr (PMI_process_mapping,
// universeSize), info-getnodeattr / info-putnodeattr (this node), kvs-put, kvs-get, kvs-fence,
// finalize, abort. A "thrid" is echoed back. Unknown commands get rc=-1 with an errmsg.
//
// Fences: a task entering kvs-fence waits (no answer) until every task of the step here has
// entered it; TakeFence then hands out the keys put here since the previous fence (for trun,
// which gathers every node's part: TaskOutput.pmi_fence) and FenceDone takes the step's merged
// keys (StepInput.fence_result) and answers every waiting task. kvs-get answers from the
// fenced key space, then from this node's own puts; a key in neither: found=FALSE.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/v1/step.pb.h"

namespace tessera::noded {

class Pmi2Server {
 public:
  struct Options {
    uint32_t size = 0;                 // tasks in the step
    std::string jobid;                 // the step's key-space name ("<job>.<step>")
    std::string process_mapping;       // PMI_process_mapping; "" = not known
    std::vector<uint32_t> local_ranks; // the tasks of the step on this node
  };
  explicit Pmi2Server(Options opts);

  // Bytes read from task `rank`'s socket; returns what to write back to it now (whole
  // answers; partial messages wait for the rest).
  std::string Feed(uint32_t rank, std::string_view bytes);
  // Every local task has entered fence seq: its puts here since the previous fence, once.
  std::optional<tessera::v1::PmiKvs> TakeFence();
  // The step's keys after fence result.seq(): the answer for each waiting task (rank -> bytes).
  // A result for another fence than the one waiting changes nothing (empty map).
  std::map<uint32_t, std::string> FenceDone(const tessera::v1::PmiKvs& result);
  // The task's socket closed: it no longer counts for fences (an ended task must not hold
  // the others' fence forever).
  std::optional<tessera::v1::PmiKvs> Gone(uint32_t rank);
  bool Aborted(std::string* message) const;

  // One PMI-2 message with its length prefix (exposed for tests and the C client of the test).
  static std::string Frame(const std::string& body);
  // "cmd=x;a=b;" -> {cmd:x, a:b}; ";;" is a literal ';'.
  static std::map<std::string, std::string> Parse(std::string_view body);

 private:
  std::string Handle(uint32_t rank, const std::map<std::string, std::string>& m);
  std::optional<tessera::v1::PmiKvs> MaybeFence();
  Options opts_;
  std::map<uint32_t, std::string> buf_;         // rank -> unparsed input
  std::set<uint32_t> live_;                     // local ranks whose socket is open
  std::set<uint32_t> in_fence_;                 // waiting in kvs-fence
  std::map<uint32_t, std::string> fence_thrid_; // their thrid, if any
  bool fence_sent_ = false;                     // TakeFence gave out the current fence
  std::optional<tessera::v1::PmiKvs> ready_;
  uint32_t seq_ = 1;                            // the fence being gathered
  std::map<std::string, std::string> pending_;  // put here since the previous fence
  std::map<std::string, std::string> kvs_;      // fenced: the whole step's
  std::map<std::string, std::string> node_attr_;
  bool aborted_ = false;
  std::string abort_message_;
};

}  // namespace tessera::noded
