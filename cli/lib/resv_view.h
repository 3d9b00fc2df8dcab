#pragma once
// Reservations in the commands (issue 17 §1): tcontrol create|update|delete|show reservation
// (scontrol's syntax and output) and tinfo -T (sinfo -T's table).
#include <string>
#include <vector>

#include "cli/lib/command.h"
#include "cli/lib/controller_api.h"

namespace tessera::cli {

// The request for `create`/`update`: KEY=VALUE words as typed, StartTime/EndTime resolved
// against `now` in the local time zone (now, now+1hour, YYYY-MM-DDTHH:MM[:SS], ...).
Result<pb::ReservationRequest> ReservationArgs(const std::vector<std::string>& words, size_t from,
                                               int64_t now);
// tcontrol words: "create reservation K=V...", "create ReservationName=X ...", "update
// reservation ...", "update ReservationName=X ...", "delete reservation NAME", "delete
// ReservationName=NAME". Returns -1 when the words are not about a reservation.
int ReservationCommand(CommandContext& ctx, ControllerApi& api, const std::vector<std::string>& words);
// Whether `word` (lower case) names the reservation entity ("reservation", "res", ...).
bool IsReservationWord(const std::string& word);
// show reservation [NAME]: scontrol's records (one line each with oneliner).
int ShowReservations(CommandContext& ctx, ControllerApi& api, const std::string& name,
                     bool oneliner);
// scontrol's record of one reservation (continuation lines start with three blanks).
std::string FormatReservation(const pb::Reservation& r, int64_t now);
// tinfo -T: RESV_NAME STATE START_TIME END_TIME DURATION NODELIST.
int PrintReservationTable(CommandContext& ctx, ControllerApi& api, bool header);

}  // namespace tessera::cli
