/* The sections of a calibration profile as the fitter's parts fill them (private to
 * calibration/src). */
#pragma once

#include <nlohmann/json.hpp>

namespace calibration {

struct ProfileParts {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();          ///< simgrid_config
  nlohmann::ordered_json links = nlohmann::ordered_json::array();            ///< link rules
  nlohmann::ordered_json hosts = nlohmann::ordered_json::array();            ///< host rules
  nlohmann::ordered_json network_factors = nlohmann::ordered_json::object(); ///< SMPI factors by placement
  nlohmann::ordered_json message_gaps = nlohmann::ordered_json::object();    ///< per-message gaps by placement
  nlohmann::ordered_json rates = nlohmann::ordered_json::object();           ///< named rates
  nlohmann::ordered_json quality = nlohmann::ordered_json::object();         ///< fit quality of each part
};

} // namespace calibration
