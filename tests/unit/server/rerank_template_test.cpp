// The rerank prompt of a model with a rerank template: {query} and {document} filled in one
// pass over the template, so a query that contains "{document}" stays as written.
#include <gtest/gtest.h>

#include "server/embeddings/embedding_routes.h"

namespace hearth::server {
namespace {

TEST(RerankTemplate, FillsBothPlaceholdersOnce) {
  EXPECT_EQ(fill_rerank_template("<q>{query}</q><d>{document}</d>{query}", "cats", "dogs"),
            "<q>cats</q><d>dogs</d>cats");
  EXPECT_EQ(fill_rerank_template("{query}|{document}", "a {document} b", "D"), "a {document} b|D");
  EXPECT_EQ(fill_rerank_template("{quer}{document", "x", "y"), "{quer}{document");
}

}  // namespace
}  // namespace hearth::server
