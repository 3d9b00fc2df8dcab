// tcontrol create|update|delete|show reservation and tinfo -T (issue 17 §1).
#include <catch2/catch.hpp>

#include "tests/unit/cli/fake_controller.h"

using namespace tessera;
using namespace tessera::cli;
using namespace tessera::cli::testing;

namespace {

pb::Reservation Maint() {
  pb::Reservation r;
  r.set_name("maint");
  r.set_start_time(kNow + 3600);
  r.set_end_time(kNow + 3600 + 5400);
  r.set_nodes("n[1-2]");
  r.set_node_count(2);
  r.set_cpu_count(8);
  r.add_users("root");
  r.set_flags("MAINT,IGNORE_JOBS");
  return r;
}

std::string Arg(const pb::ReservationRequest& q, const std::string& key) {
  for (const auto& a : q.args())
    if (a.key() == key) return a.value();
  return "<none>";
}

}  // namespace

TEST_CASE("tcontrol create reservation: keys as typed, times resolved here") {
  UseUtc();
  CommandRun r;
  pb::ReservationResponse ok;
  ok.set_message("Reservation created: maint");
  r.ctld.CreateReservation_result = ok;
  REQUIRE(r.Run(RunTcontrol, {"create", "reservation", "ReservationName=maint",
                              "StartTime=now+1hour", "EndTime=2023-11-15T00:00:00", "Nodes=n[1-2]",
                              "users=root", "Flags=MAINT"}) == 0);
  REQUIRE(r.ctld.CreateReservation_calls.size() == 1);
  const auto& q = r.ctld.CreateReservation_calls[0];
  CHECK(Arg(q, "StartTime") == std::to_string(kNow + 3600));
  CHECK(Arg(q, "EndTime") == "1700006400");
  CHECK(Arg(q, "users") == "root");
  CHECK(Arg(q, "Nodes") == "n[1-2]");
  CHECK(r.out == "Reservation created: maint\n");
  // "create ReservationName=..." (no entity word) is the same command.
  CommandRun r2;
  REQUIRE(r2.Run(RunTcontrol, {"create", "ReservationName=x", "Duration=10", "Users=a"}) == 0);
  CHECK(Arg(r2.ctld.CreateReservation_calls.at(0), "ReservationName") == "x");
  // A bad time is refused before any call; the controller's refusal is shown as scontrol does.
  CommandRun bad;
  CHECK(bad.Run(RunTcontrol, {"create", "reservation", "StartTime=whenever"}) == 1);
  CHECK(bad.err.find("StartTime") != std::string::npos);
  CHECK(bad.ctld.CreateReservation_calls.empty());
  CommandRun refused;
  refused.ctld.CreateReservation_result = Status(Code::kInvalidArgument, "invalid node name specified: n9");
  CHECK(refused.Run(RunTcontrol, {"create", "res", "Nodes=n9", "Users=a", "Duration=5"}) == 1);
  CHECK(refused.err.find("Error creating the reservation: invalid node name specified: n9") !=
        std::string::npos);
}

TEST_CASE("tcontrol update and delete reservation") {
  CommandRun r;
  REQUIRE(r.Run(RunTcontrol, {"update", "ReservationName=maint", "Users=-bob", "Users+=carol"}) == 0);
  const auto& q = r.ctld.UpdateReservation_calls.at(0);
  CHECK(Arg(q, "Users") == "-bob");
  CHECK(Arg(q, "Users+") == "carol");
  CommandRun d;
  REQUIRE(d.Run(RunTcontrol, {"delete", "reservation", "maint"}) == 0);
  CHECK(d.ctld.DeleteReservation_calls.at(0).name() == "maint");
  CommandRun d2;
  REQUIRE(d2.Run(RunTcontrol, {"delete", "ReservationName=maint"}) == 0);
  CHECK(d2.ctld.DeleteReservation_calls.at(0).name() == "maint");
  CommandRun no;
  CHECK(no.Run(RunTcontrol, {"delete", "job", "5"}) == 1);
  CHECK(no.err.find("only reservations") != std::string::npos);
}

TEST_CASE("tcontrol show reservation: scontrol's record; tinfo -T: sinfo -T's table") {
  UseUtc();
  CommandRun r;
  pb::ListReservationsResponse list;
  *list.add_reservations() = Maint();
  r.ctld.ListReservations_result = list;
  REQUIRE(r.Run(RunTcontrol, {"show", "reservation", "maint"}) == 0);
  CHECK(r.ctld.ListReservations_calls.at(0).name() == "maint");
  CHECK(r.out ==
        "ReservationName=maint StartTime=2023-11-14T23:13:20 EndTime=2023-11-15T00:43:20 "
        "Duration=01:30:00\n"
        "   Nodes=n[1-2] NodeCnt=2 CoreCnt=8 Features=(null) PartitionName=(null) "
        "Flags=MAINT,IGNORE_JOBS\n"
        "   TRES=cpu=8\n"
        "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
        "BurstBuffer=(null)\n"
        "   MaxStartDelay=(null)\n");
  CommandRun one;
  one.ctld.ListReservations_result = list;
  REQUIRE(one.Run(RunTcontrol, {"-o", "show", "res"}) == 0);
  CHECK(one.out.find("Duration=01:30:00 Nodes=n[1-2]") != std::string::npos);
  CommandRun t;
  t.ctld.ListReservations_result = list;
  REQUIRE(t.Run(RunTinfo, {"-T"}) == 0);
  CHECK(t.out ==
        "RESV_NAME         STATE          START_TIME            END_TIME     DURATION  NODELIST\n"
        "maint          INACTIVE 2023-11-14T23:13:20 2023-11-15T00:43:20      1:30:00  n[1-2]\n");
  CommandRun none;
  REQUIRE(none.Run(RunTinfo, {"-T"}) == 0);
  CHECK(none.out == "No reservations in the system\n");
}
