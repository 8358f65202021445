module github.com/viewcount/viewcount

go 1.26.0
