module github.com/herald-webhooks/herald/clients/go

go 1.22
