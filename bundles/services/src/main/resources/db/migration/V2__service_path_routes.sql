-- requests to a service's hostnames whose path lies under prefix go to target_service_id (ServiceControl.setPathRoutes)
CREATE TABLE service_path_routes (
    service_id        text NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    prefix            text NOT NULL,
    target_service_id text NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    PRIMARY KEY (service_id, prefix)
);
CREATE INDEX service_path_routes_target ON service_path_routes (target_service_id);
