-- The least-privilege monitoring account innowatch polls with: it reads status, never data.
CREATE USER IF NOT EXISTS 'innowatch'@'%' IDENTIFIED BY 'monitorpw';
GRANT PROCESS, REPLICATION CLIENT ON *.* TO 'innowatch'@'%';
GRANT SELECT ON performance_schema.* TO 'innowatch'@'%';
