Feature: A deployment says whether it can work
  Operators point the orchestrator's liveness probe at /healthz and the load
  balancer's health check at /readyz (docs/operations.md). Both answer
  without authentication, in plain JSON, outside the merchant contract:
  /healthz only says the process answers; /readyz says, check by check,
  whether the database answers with the schema this build expects and
  whether the workers the instance runs are turning.

  Scenario: A running deployment is alive and ready, check by check
    When a probe asks "/healthz"
    Then the request succeeds
    And the response field "status" is "ok"
    When a probe asks "/readyz"
    Then the request succeeds
    And the response field "status" is "ready"
    And the response field "checks.database.status" is "ok"
    And the response field "checks.migrations.status" is "ok"
