-- a server another capability registered for the workspace (the app platform: 'app-group:<id>'); only it changes one
ALTER TABLE mcp_servers ADD COLUMN managed_by text;
