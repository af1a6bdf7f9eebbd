import * as pulumi from "@pulumi/pulumi";

export const project = pulumi.getProject();
export const stack = pulumi.getStack();
