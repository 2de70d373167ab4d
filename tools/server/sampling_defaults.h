// Server-wide sampling defaults that need more than the command line: the -j schema
// converted to a grammar, the model's general.sampling.* hints, --ignore-eos bans.
#pragma once

#include "base/status.h"
#include "gguf/file.h"
#include "server/fields/completion_fields.h"
#include "server/options/server_args.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server_tool {

// -j/-jf converted to GBNF as the requests' default grammar, in place of --grammar's (an
// invalid schema fails startup, as in the reference). The other sampling defaults are
// options as given, already in `defaults`.
Status json_schema_grammar(const server::options::ServerArgs& args,
                           server::RequestDefaults& defaults);

// Applies the model's general.sampling.* keys to the options the user did not set, and
// turns --ignore-eos into bans of every end-of-generation token.
void apply_model_defaults(const server::options::ServerArgs& args, const gguf::File& metadata,
                          const tokenizer::Tokenizer& tok, server::RequestDefaults& defaults);

}  // namespace hearth::server_tool
