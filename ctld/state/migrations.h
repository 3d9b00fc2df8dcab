#pragma once
// Numbered schema migrations. Migration N (1-based) moves a database from user_version N-1 to N.
// Never edit a released migration; append a new one.
#include <vector>

namespace tessera::ctld {

inline const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> kMigrations = {
      // 1: initial schema.
      R"sql(
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE jobs (job_id INTEGER PRIMARY KEY, state INTEGER NOT NULL, record TEXT NOT NULL);
      CREATE TABLE job_events (seq INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,
                               time INTEGER NOT NULL, type TEXT NOT NULL, detail TEXT NOT NULL);
      CREATE INDEX job_events_job ON job_events(job_id);
      CREATE TABLE acct_jobs (job_id INTEGER PRIMARY KEY, uid INTEGER NOT NULL,
                              state INTEGER NOT NULL, submit_time INTEGER NOT NULL,
                              start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,
                              partition TEXT NOT NULL, account TEXT NOT NULL,
                              record TEXT NOT NULL);
      CREATE INDEX acct_jobs_uid ON acct_jobs(uid);
      CREATE INDEX acct_jobs_end ON acct_jobs(end_time);
      )sql",
      // 2: scripts and environments live only on disk until launch.
      R"sql(
      CREATE TABLE job_payloads (job_id INTEGER PRIMARY KEY, script TEXT NOT NULL,
                                 env TEXT NOT NULL);
      )sql",
      // 3: job steps (trun) for accounting.
      R"sql(
      CREATE TABLE job_steps (job_id INTEGER NOT NULL, step_id INTEGER NOT NULL,
                              name TEXT NOT NULL, nodelist TEXT NOT NULL, ntasks INTEGER NOT NULL,
                              ncpus INTEGER NOT NULL, state INTEGER NOT NULL,
                              exit_code INTEGER NOT NULL, exit_signal INTEGER NOT NULL,
                              start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,
                              PRIMARY KEY (job_id, step_id));
      )sql",
      // 4: administrators' node states (drain/down, reason) survive a restart.
      R"sql(
      CREATE TABLE node_state (name TEXT PRIMARY KEY, drain INTEGER NOT NULL, down INTEGER NOT NULL,
                               reason TEXT NOT NULL, reason_time INTEGER NOT NULL);
      )sql",
      // 5: drained GPUs (an administrator's per-GPU drain, or a failure the node reported) stay
      // drained over a restart until an administrator resumes them (issue 14).
      R"sql(
      CREATE TABLE gpu_drain (node TEXT NOT NULL, gpu INTEGER NOT NULL, reason TEXT NOT NULL,
                              reason_time INTEGER NOT NULL, origin TEXT NOT NULL,
                              PRIMARY KEY (node, gpu));
      )sql",
      // 6: the association store (issue 16 §1, ctld/accounts): accounts, users, user
      // associations and QoS, one JSON record per row (kind: account | user | assoc | qos;
      // name: the account, user or QoS name, "user\naccount" for an association).
      R"sql(
      CREATE TABLE assoc (kind TEXT NOT NULL, name TEXT NOT NULL, record TEXT NOT NULL,
                          PRIMARY KEY (kind, name));
      )sql",
      // 7: fair-share usage per association (issue 16 §3, ctld/usage.h): decayed
      // billing-seconds as of meta usage_last_charge, kept as text ("%.17g", exact).
      R"sql(
      CREATE TABLE assoc_usage (account TEXT NOT NULL, user TEXT NOT NULL, usage TEXT NOT NULL,
                                PRIMARY KEY (account, user));
      )sql",
      // 8: advance reservations (issue 17 §1, ctld/reservations.h): one JSON record per
      // reservation (name, times, nodes, users, accounts, flags, partition).
      R"sql(
      CREATE TABLE reservations (name TEXT PRIMARY KEY, record TEXT NOT NULL);
      )sql",
      // 9: issue 19 (h19): who set a node's reason (sinfo -R USER; -1 unknown), and each
      // step's usage gathered from its cgroups (a serialized tessera.v1.StepUsage; empty =
      // not gathered). The batch script's usage is the step row with step id 0xfffffffb.
      R"sql(
      ALTER TABLE node_state ADD COLUMN reason_uid INTEGER NOT NULL DEFAULT -1;
      ALTER TABLE job_steps ADD COLUMN usage BLOB NOT NULL DEFAULT x'';
      )sql",
      // 10: issue 21 (h21): who drained a GPU (an administrator's uid, or the controller's own
      // for a GPU the node reported failed or lost; -1 unknown: drained before this existed).
      R"sql(
      ALTER TABLE gpu_drain ADD COLUMN reason_uid INTEGER NOT NULL DEFAULT -1;
      )sql",
  };
  return kMigrations;
}

}  // namespace tessera::ctld
