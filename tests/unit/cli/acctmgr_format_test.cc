// tacctmgr's output formats (cli/lib/acctmgr_format.h), as sacctmgr's print_fields.
#include <catch2/catch.hpp>

#include "cli/lib/acctmgr_format.h"

using namespace tessera;
using namespace tessera::cli;

TEST_CASE("format= takes sacctmgr's names and shortest prefixes, with widths") {
  auto f = ParseAcctmgrFormat("acc,Descr%30,org,DefaultA,fair,GrpTRES,GrpTRESMins,MaxTRESPerJob,MaxSubmit,DefaultQOS%-5");
  REQUIRE(f.ok());
  std::vector<std::string> headers;
  for (const auto& x : *f) headers.push_back(x.header);
  CHECK(headers == std::vector<std::string>{"Account", "Descr", "Org", "Def Acct", "Share", "GrpTRES",
                                            "GrpTRESMins", "MaxTRES", "MaxSubmit", "Def QOS"});
  CHECK((*f)[1].width == 30);
  CHECK((*f)[9].width == -5);
  auto bad = ParseAcctmgrFormat("Account,Colour");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "Invalid field requested: \"Colour\"");
  CHECK_FALSE(ParseAcctmgrFormat("Ac").ok());  // shorter than sacctmgr's shortest prefix
}

TEST_CASE("columns, -p and -P layouts") {
  auto f = ParseAcctmgrFormat("Account%8,User%-6");
  REQUIRE(f.ok());
  std::vector<AcctmgrRow> rows = {{{"Account", "physics"}, {"User", "alice"}},
                                  {{"Account", "verylongname"}, {"User", ""}}};
  CHECK(FormatAcctmgrTable(*f, rows, AcctmgrLayout::kColumns, true) ==
        " Account   User \n"
        "-------- ------ \n"
        " physics alice  \n"
        "verylon+        \n");
  CHECK(FormatAcctmgrTable(*f, rows, AcctmgrLayout::kParsable, true) ==
        "Account|User|\nphysics|alice|\nverylongname||\n");
  CHECK(FormatAcctmgrTable(*f, rows, AcctmgrLayout::kParsable2, false) ==
        "physics|alice\nverylongname|\n");
}
