// Issue 19 (h19 s6): the PMI-2 server's wire protocol and fences (noded/pmi2.h), pure.
#include <catch2/catch.hpp>

#include "noded/pmi2.h"

namespace tessera::noded {
namespace {

Pmi2Server Server() {
  Pmi2Server::Options o;
  o.size = 4;
  o.jobid = "12.3";
  o.process_mapping = "(vector,(0,2,2))";
  o.local_ranks = {0, 1};
  return Pmi2Server(o);
}

std::string Msg(const std::string& body) { return Pmi2Server::Frame(body); }

TEST_CASE("Pmi2Server answers the handshake, fullinit, job-getid and job attributes", "[pmi2]") {
  auto s = Server();
  CHECK(s.Feed(1, "cmd=init pmi_version=2 pmi_subversion=0\n") ==
        "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
  std::string r = s.Feed(1, Msg("cmd=fullinit;pmirank=1;threaded=FALSE;"));
  CHECK(std::stoul(r.substr(0, 6)) == r.size() - 6);  // the length prefix
  auto m = Pmi2Server::Parse(r.substr(6));
  CHECK(m["cmd"] == "fullinit-response");
  CHECK(m["rank"] == "1");
  CHECK(m["size"] == "4");
  CHECK(m["rc"] == "0");
  m = Pmi2Server::Parse(s.Feed(1, Msg("cmd=job-getid;thrid=ab;")).substr(6));
  CHECK(m["jobid"] == "12.3");
  CHECK(m["thrid"] == "ab");
  m = Pmi2Server::Parse(s.Feed(1, Msg("cmd=info-getjobattr;key=PMI_process_mapping;")).substr(6));
  CHECK(m["found"] == "TRUE");
  CHECK(m["value"] == "(vector,(0,2,2))");
  m = Pmi2Server::Parse(s.Feed(1, Msg("cmd=info-getjobattr;key=nope;")).substr(6));
  CHECK(m["found"] == "FALSE");
  m = Pmi2Server::Parse(s.Feed(1, Msg("cmd=spawn;")).substr(6));
  CHECK(m["rc"] == "-1");
  CHECK(m["errmsg"] == "unsupported PMI-2 command spawn");
}

TEST_CASE("Pmi2Server takes partial messages and escaped semicolons", "[pmi2]") {
  auto s = Server();
  std::string put = Msg("cmd=kvs-put;key=a;value=x;;y;");
  CHECK(s.Feed(0, put.substr(0, 4)).empty());
  CHECK(Pmi2Server::Parse(s.Feed(0, put.substr(4)).substr(6))["cmd"] == "kvs-put-response");
  auto m = Pmi2Server::Parse(s.Feed(0, Msg("cmd=kvs-get;key=a;")).substr(6));
  CHECK(m["found"] == "TRUE");
  CHECK(m["value"] == "x;y");
  CHECK(s.Feed(0, Msg("cmd=kvs-get;key=a;")).find("value=x;;y;") != std::string::npos);
}

TEST_CASE("Pmi2Server fences once every local task entered, then answers them all", "[pmi2]") {
  auto s = Server();
  s.Feed(0, Msg("cmd=kvs-put;key=k0;value=v0;"));
  s.Feed(1, Msg("cmd=kvs-put;key=k1;value=v1;"));
  CHECK(s.Feed(0, Msg("cmd=kvs-fence;")).empty());  // waits
  CHECK_FALSE(s.TakeFence());
  CHECK(s.Feed(1, Msg("cmd=kvs-fence;thrid=9;")).empty());
  auto part = s.TakeFence();
  REQUIRE(part);
  CHECK(part->seq() == 1);
  CHECK(part->kv().size() == 2);
  CHECK(part->kv().at("k1") == "v1");
  CHECK_FALSE(s.TakeFence());  // once
  tessera::v1::PmiKvs wrong;
  wrong.set_seq(2);
  CHECK(s.FenceDone(wrong).empty());
  tessera::v1::PmiKvs all = *part;
  (*all.mutable_kv())["k2"] = "remote";
  auto answers = s.FenceDone(all);
  REQUIRE(answers.size() == 2);
  CHECK(Pmi2Server::Parse(answers[0].substr(6))["cmd"] == "kvs-fence-response");
  CHECK(Pmi2Server::Parse(answers[1].substr(6))["thrid"] == "9");
  CHECK(Pmi2Server::Parse(s.Feed(0, Msg("cmd=kvs-get;key=k2;")).substr(6))["value"] == "remote");
  // The next fence is number 2; a task that went away does not hold it.
  s.Feed(0, Msg("cmd=kvs-fence;"));
  CHECK_FALSE(s.TakeFence());
  auto second = s.Gone(1);
  REQUIRE(second);
  CHECK(second->seq() == 2);
  CHECK(second->kv().empty());
}

TEST_CASE("Pmi2Server records an abort", "[pmi2]") {
  auto s = Server();
  CHECK(s.Feed(0, Msg("cmd=abort;isworld=TRUE;msg=bad input;")).empty());
  std::string why;
  CHECK(s.Aborted(&why));
  CHECK(why == "bad input");
}

}  // namespace
}  // namespace tessera::noded
