variable "primary_region" {
  description = "Region of the primary clusters"
  type        = string
  default     = "eu-west-1"
}

variable "standby_region" {
  description = "Region of the payments standby used by the failover runbook"
  type        = string
  default     = "eu-central-1"
}

variable "oncall_team" {
  type    = string
  default = "platform"
}
