variable "region" {
  type    = string
  default = "eu-north-1"
}

variable "instance_type" {
  description = "EC2 type for the app servers (t3.small is enough for a demo)"
  type        = string
  default     = "t3.medium"
}

variable "db_instance_type" {
  type    = string
  default = "db.t3.large"
}

variable "app_count" {
  type    = number
  default = 2
}
