# Fernhill core infrastructure (synthetic, confidential)

terraform {
  required_version = ">= 1.7"
  backend "s3" {
    bucket = "fernhill-terraform-state"
    key    = "core/terraform.tfstate"
    region = "eu-west-1"
  }
}

provider "aws" {
  region = var.primary_region
}

resource "aws_s3_bucket" "db_backups" {
  bucket = "fernhill-db-backups"
}

resource "aws_s3_bucket_versioning" "db_backups" {
  bucket = aws_s3_bucket.db_backups.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_db_instance" "orders" {
  identifier              = "orders"
  engine                  = "postgres"
  engine_version          = "16.2"
  instance_class          = "db.r6g.large"
  backup_retention_period = 14
  multi_az                = true
  # WAL archiving every 5 minutes gives the 5-minute RPO in the restore runbook.
  username = "orders_admin"
  password = "FAKE-PASSWORD-NOT-REAL"
}

resource "aws_s3_bucket" "ledger_archive" {
  bucket              = "fernhill-ledger-archive"
  object_lock_enabled = true
}
