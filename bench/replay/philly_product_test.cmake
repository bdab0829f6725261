# The Philly replay's gpufed strategy is the product: after `gpufed-replay philly
# --state DIR`, the audit journal it leaves verifies (signatures, closed), holds exactly
# one `placed` decision per started job, and `gpufed audit replay --all` with the
# recorded revision reproduces every decision.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(
  COMMAND ${REPLAY} philly --trace ${DATA}/philly_tiny.csv --from 2017-10-02 --days 1 --onprem-gpus 32
          --format csv --jobs ${OUT}/jobs.csv --state ${OUT}/state
  OUTPUT_VARIABLE csv ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpufed-replay philly --state exited with ${rc}: ${err}")
endif()

execute_process(
  COMMAND ${GPUFED} audit verify ${OUT}/state/audit --key ${OUT}/state/audit/signing.pub --require-closed
  OUTPUT_VARIABLE verified ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "audit verify failed (${rc}): ${verified} ${err}")
endif()

# Started gpufed jobs in the schedule (a start time), against placed decisions.
file(STRINGS ${OUT}/jobs.csv rows REGEX "^gpufed,")
set(started 0)
foreach(row IN LISTS rows)
  if(row MATCHES "^gpufed,[^,]*,[^,]*,[^,]*,[^,]*,[0-9]")
    math(EXPR started "${started} + 1")
  endif()
endforeach()
if(started LESS 200)
  message(FATAL_ERROR "only ${started} gpufed jobs started")
endif()
execute_process(
  COMMAND ${GPUFED} audit query -d ${OUT}/state/audit --kind decision --outcome placed -o jsonl
  OUTPUT_VARIABLE placed ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "audit query failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "\n" newlines "${placed}")
list(LENGTH newlines n_placed)
if(NOT n_placed EQUAL started)
  message(FATAL_ERROR "${n_placed} placed decisions in the journal for ${started} started jobs")
endif()

execute_process(
  COMMAND ${GPUFED} audit replay --all -d ${OUT}/state/audit
  WORKING_DIRECTORY ${OUT}
  OUTPUT_VARIABLE replayed ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT replayed MATCHES "replayed ([0-9]+) decisions: ([0-9]+) same, 0 different")
  message(FATAL_ERROR "audit replay --all (${rc}): ${replayed} ${err}")
endif()
if(NOT CMAKE_MATCH_1 EQUAL CMAKE_MATCH_2)
  message(FATAL_ERROR "replay: ${replayed}")
endif()
message(STATUS "philly --state: ${started} jobs started, journal verifies, ${CMAKE_MATCH_1} decisions replay the same")
