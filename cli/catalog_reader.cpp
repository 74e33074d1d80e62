// SPDX-License-Identifier: MIT
// The catalogue reader the refresh validates downloads with (issue #41: the CSV reader and name
// mapping, providers/market/catalog_csv.hpp, are written beside this; this is where they plug in).
#include "cli/catalog_support.hpp"

namespace gpurent {

market::CatalogReader catalog_reader()
{
  return [](std::string_view cloud, std::string_view) -> Result<market::CatalogReading> {
    return fail(Errc::unsupported, std::string(cloud) +
                                       ": this build has no catalogue reader yet, so the downloaded file cannot be "
                                       "checked and was not used");
  };
}

}  // namespace gpurent
