// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "common/closest_names.hpp"

using gpurent::closest_names;
using gpurent::did_you_mean;
using gpurent::edit_distance;

TEST_CASE("edit_distance: insertions, deletions, substitutions and swaps count one each", "[common][did-you-mean]")
{
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("train1", "train1") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("trian1", "train1") == 1);  // a swap
  CHECK(edit_distance("train", "train1") == 1);   // an insertion
  CHECK(edit_distance("train12", "train1") == 1); // a deletion
  CHECK(edit_distance("train2", "train1") == 1);  // a substitution
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("ca", "abc") == 3);         // optimal string alignment, not full Damerau
  CHECK(edit_distance("abc", "ca") == edit_distance("ca", "abc"));
}

TEST_CASE("closest_names: the near ones, closest first, within a third of the length", "[common][did-you-mean]")
{
  const std::vector<std::string> known = {"train1", "train2", "eval", "big-box", "trainer"};
  CHECK(closest_names("trian1", known) == std::vector<std::string>{"train1"});
  CHECK(closest_names("train3", known) == std::vector<std::string>{"train1", "train2"});  // trainer is 2 away
  CHECK(closest_names("train3", known, 1) == std::vector<std::string>{"train1"});
  CHECK(closest_names("train", known) == std::vector<std::string>{"train1", "train2"});
  CHECK(closest_names("trainerr", known) == std::vector<std::string>{"trainer"});
  CHECK(closest_names("big_bx", known) == std::vector<std::string>{"big-box"});  // 2 of 7 allowed
  CHECK(closest_names("evl", known) == std::vector<std::string>{"eval"});
  CHECK(closest_names("zzz", known).empty());
  CHECK(closest_names("x", known).empty());
  CHECK(closest_names("train1", known) == std::vector<std::string>{"train2"});  // never the name itself
  CHECK(closest_names("a", {"b", "b"}) == std::vector<std::string>{"b"});       // no duplicates
  CHECK(closest_names("anything", {}).empty());
}

TEST_CASE("did_you_mean: the words that end a not-found message", "[common][did-you-mean]")
{
  CHECK(did_you_mean({}).empty());
  CHECK(did_you_mean({"train1"}) == "did you mean train1?");
  CHECK(did_you_mean({"train1", "train2"}) == "did you mean train1 or train2?");
  CHECK(did_you_mean({"a", "b", "c"}) == "did you mean a, b or c?");
}
